import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { executable, onPath } from './executables.js';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_TYPES } from '../../workflows/contracts.js';
import { StopWaiting, stopChild, waitFor } from './processes.js';
import { goInstall, type Log, obtainOnce, toolCacheDir } from './tool-cache.js';

const execFileAsync = promisify(execFile);

/** The newest Temporal CLI release whose module can be `go install`ed (later ones carry a replace directive). */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const GO_MODULE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const STALE_LOCK_MS = 45 * 60_000;

export function cachedCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(toolCacheDir(env), `temporal-v${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI_PATH, the project's tool cache, then PATH. Returns undefined
 * when none is there (`ensureTemporalCli` obtains one).
 */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env.TEMPORAL_CLI_PATH?.trim();
  if (configured) {
    if (!executable(configured)) {
      throw new Error(`TEMPORAL_CLI_PATH=${configured} is not an executable file`);
    }
    return configured;
  }
  const cached = cachedCliPath(env);
  if (executable(cached)) {
    return cached;
  }
  return onPath('temporal', env);
}

/** Finds the CLI, or obtains it once per machine (download, else `go install`) into the tool cache. */
export async function ensureTemporalCli(log: Log, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return (
    findTemporalCli(env) ??
    obtainOnce({
      target: cachedCliPath(env),
      name: 'the Temporal CLI',
      staleLockMs: STALE_LOCK_MS,
      log,
      obtain: async (staging) => (await tryDownload(staging, log)) ?? (await buildWithGo(staging, log, env)),
    })
  );
}

/** Temporal's own release archive, where the network allows it. */
async function tryDownload(staging: string, log: Log): Promise<string | undefined> {
  const platform = process.platform === 'darwin' ? 'darwin' : 'linux';
  const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
  const url = `https://temporal.download/cli/archive/v${TEMPORAL_CLI_VERSION}?platform=${platform}&arch=${arch}`;
  log(`downloading Temporal CLI v${TEMPORAL_CLI_VERSION} from ${url}`);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    if (!response.ok || response.body === null) {
      throw new Error(`HTTP ${response.status}`);
    }
    const archive = path.join(staging, 'temporal.tar.gz');
    const { Readable } = await import('node:stream');
    const { pipeline } = await import('node:stream/promises');
    await pipeline(Readable.fromWeb(response.body as never), createWriteStream(archive));
    await execFileAsync('tar', ['-xzf', archive, '-C', staging, 'temporal']);
    const binary = path.join(staging, 'temporal');
    await execFileAsync(binary, ['--version']);
    return binary;
  } catch (err) {
    log(`download not possible here (${(err as Error).message}); building with go install instead`);
    return undefined;
  }
}

/** Builds the CLI (with the dev server and its Web UI) from the Go module proxy. */
async function buildWithGo(staging: string, log: Log, env: NodeJS.ProcessEnv): Promise<string> {
  const go = onPath('go', env);
  if (go === undefined) {
    throw new Error(
      'The Temporal CLI is not installed and could not be downloaded, and no Go toolchain is on PATH to build it. ' +
        'Install it (https://docs.temporal.io/cli), set TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS to use an existing server.',
    );
  }
  return goInstall({ go, module: GO_MODULE, binary: 'temporal', gobin: staging, name: 'the Temporal CLI', log, env });
}

export interface TemporalDevServerOptions {
  cliPath: string;
  port: number;
  /** Web UI port; omitted = headless. */
  uiPort?: number;
  /** The remote codec endpoint the Web UI decodes payloads with (the API's /api/temporal-codec). */
  uiCodecEndpoint?: string;
  /** SQLite file; omitted = in memory. */
  dbFile?: string;
  namespace: string;
  logFile: string;
  log?: Log;
  /** Dynamic config on top of DEV_SERVER_DYNAMIC_CONFIG (the test run's server: TEST_DEV_SERVER_DYNAMIC_CONFIG). */
  extraDynamicConfig?: Readonly<Record<string, unknown>>;
}

export interface RunningTemporal {
  address: string;
  uiUrl: string | undefined;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The dev server's dynamic config, the same as compose's server (deployment.e2e holds them equal).
 * Latency settings for a single server: one partition per task
 * queue (partitions spread matching over the hosts of a cluster); history's task queues may be read
 * more than 20 times a second (the default): each step of a workflow (a task to dispatch, a child to
 * start, a timer, a visibility update) otherwise waited about 30 ms for its queue's next read,
 * measured in the run timelines. And the schedule settings (deploy/temporal/dynamicconfig/agentsite.yaml
 * says why): scheduled agents due together.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  'worker.perNamespaceWorkerOptions': { StickyScheduleToStartTimeout: '60s' },
  'worker.schedulerNamespaceStartWorkflowRPS': 1000,
  'system.enableActivityEagerExecution': true,
};

/** Starts `temporal server start-dev` with our search attributes and waits until its frontend answers. */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<RunningTemporal> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'warn'];
  args.push('--namespace', options.namespace);
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...options.extraDynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) {
    args.push('--search-attribute', `${name}=${type === 'KEYWORD_LIST' ? 'KeywordList' : 'Keyword'}`);
  }
  if (options.dbFile !== undefined) {
    mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  if (options.uiPort !== undefined) {
    args.push('--ui-port', String(options.uiPort));
    if (options.uiCodecEndpoint !== undefined) {
      args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
    }
  } else {
    args.push('--headless');
  }
  return launchTemporal({
    what: 'the Temporal dev server',
    command: options.cliPath,
    args,
    logFile: options.logFile,
    address: `127.0.0.1:${options.port}`,
    ready: async (connection) => {
      await connection.withDeadline(Date.now() + 1_000, () =>
        connection.workflowService.describeNamespace({ namespace: options.namespace }),
      );
      return true;
    },
    timeoutMs: 60_000,
    intervalMs: 250,
    stopGraceMs: 10_000,
    uiUrl: options.uiPort === undefined ? undefined : `http://localhost:${options.uiPort}`,
  });
}

export interface TemporalLaunch {
  /** What the messages call it, e.g. "the Temporal dev server". */
  what: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Its output, appended. */
  logFile: string;
  /** The frontend's host:port. */
  address: string;
  /** Asked on a fresh connection until it answers true (an error counts as not yet). */
  ready: (connection: Connection) => Promise<boolean>;
  timeoutMs: number;
  intervalMs: number;
  /** How long a stop waits after SIGTERM. */
  stopGraceMs: number;
  uiUrl?: string;
}

/**
 * Starts a Temporal server process with its output in its log file and waits until it is ready; one
 * that exits meanwhile fails the wait at once, one that is not ready in time is stopped.
 */
export async function launchTemporal(launch: TemporalLaunch): Promise<RunningTemporal> {
  mkdirSync(path.dirname(launch.logFile), { recursive: true });
  const logStream = createWriteStream(launch.logFile, { flags: 'a' });
  const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(logStream);
  child.stderr.pipe(logStream);
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `exit ${code ?? signal}`;
  });
  try {
    await waitFor(
      `${launch.what} on ${launch.address}`,
      async () => {
        if (exited !== undefined) {
          throw new StopWaiting(`${launch.what} stopped (${exited}); see ${launch.logFile}`);
        }
        const connection = await Connection.connect({ address: launch.address, connectTimeout: '1 second' });
        try {
          return await launch.ready(connection);
        } finally {
          await connection.close();
        }
      },
      launch.timeoutMs,
      launch.intervalMs,
    );
  } catch (err) {
    await stopChild(child, launch.stopGraceMs);
    throw err;
  }
  return {
    address: launch.address,
    uiUrl: launch.uiUrl,
    process: child,
    stop: async () => {
      await stopChild(child, launch.stopGraceMs);
      logStream.end();
    },
  };
}
