/**
 * A Temporal server on PostgreSQL, in the shape docker-compose.yml runs it (the same server release,
 * its configuration from environment variables through the template built into the server, four
 * history shards, deploy/temporal/dynamicconfig), for the benchmarks that measure what the dev
 * server's SQLite store cannot carry (`BENCH_TEMPORAL=cluster`, see bench/run.ts). The server and
 * Temporal's own temporal-sql-tool are built once per machine from the Go module proxy, with the
 * schema files of the same release.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { msToTs } from '@temporalio/common/lib/time.js';
import { executable, onPath } from './executables.js';
import { launchTemporal, type RunningTemporal } from './temporal.js';
import { goInstall, type Log, obtainOnce, toolCacheDir } from './tool-cache.js';

const execFileAsync = promisify(execFile);

/** The release of the `temporalio/server` image docker-compose.yml runs. */
export const TEMPORAL_SERVER_VERSION = '1.30.1';
const SERVER_MODULE = `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`;
const STALE_LOCK_MS = 45 * 60_000;
/** Temporal's two databases, named as docker-compose.yml's temporal-schema service creates them. */
const DATABASES = [
  { name: 'temporal', schema: 'temporal' },
  { name: 'temporal_visibility', schema: 'visibility' },
] as const;

/**
 * A port free on 127.0.0.1 below 32768: Temporal keeps its membership ports in a smallint column, so
 * the system's ephemeral ports (from 32768 on Linux) do not fit.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000); // above the suites' worker ranges (test/setup/worker-ports.ts)
    if (taken.has(port)) {
      continue;
    }
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      return port;
    }
  }
  throw new Error('no free port between 20000 and 32000 on 127.0.0.1');
}

/** The built server, temporal-sql-tool and the PostgreSQL schema files, in one directory of the tool cache. */
export function cachedServerDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(toolCacheDir(env), `temporal-server-v${TEMPORAL_SERVER_VERSION}`, 'bin');
}

const serverBinary = (dir: string): string => path.join(dir, 'server');
const sqlTool = (dir: string): string => path.join(dir, 'sql');
const schemaDir = (dir: string): string => path.join(dir, 'schema', 'postgresql', 'v12');

function serverReady(dir: string): boolean {
  return executable(serverBinary(dir)) && executable(sqlTool(dir)) && existsSync(schemaDir(dir));
}

/** Finds the server in the tool cache, or builds it once per machine with `go install`. */
export async function ensureTemporalServer(log: Log, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const target = cachedServerDir(env);
  if (serverReady(target)) {
    return target;
  }
  return obtainOnce({
    target,
    name: `the Temporal server v${TEMPORAL_SERVER_VERSION}`,
    staleLockMs: STALE_LOCK_MS,
    log,
    ready: serverReady,
    obtain: async (staging) => {
      const go = onPath('go', env);
      if (go === undefined) {
        throw new Error(
          'BENCH_TEMPORAL=cluster builds the Temporal server with Go, and no Go toolchain is on PATH. ' +
            'Install Go, or point the benchmarks at an existing cluster.',
        );
      }
      const out = path.join(staging, 'bin');
      for (const [pkg, binary] of [
        ['cmd/server', 'server'],
        ['cmd/tools/sql', 'sql'],
      ] as const) {
        await goInstall({
          go,
          module: `go.temporal.io/server/${pkg}@v${TEMPORAL_SERVER_VERSION}`,
          binary,
          gobin: out,
          name: `Temporal's ${binary}`,
          log,
          env,
        });
      }
      // go install has put the module's source (with its schema files) in the module cache.
      const { stdout } = await execFileAsync(go, ['env', 'GOMODCACHE'], { env });
      const moduleDir = path.join(stdout.trim(), SERVER_MODULE);
      cpSync(path.join(moduleDir, 'schema', 'postgresql', 'v12'), schemaDir(out), { recursive: true });
      return out;
    },
  });
}

export interface TemporalClusterOptions {
  /** From ensureTemporalServer. */
  serverDir: string;
  /** The PostgreSQL server Temporal keeps its two databases in (docker-compose.yml shares the service's). */
  postgres: { host: string; port: number; user: string; password: string };
  namespace: string;
  /** Temporal's dynamic config file (docker-compose.yml mounts deploy/temporal/dynamicconfig). */
  dynamicConfigFile: string;
  logFile: string;
  log?: Log;
}

/**
 * Creates Temporal's databases and schema as docker-compose.yml's temporal-schema service does
 * (deploy/temporal/setup-schema.sh), starts the server, and creates the namespace (one day of
 * retention). The service's worker registers its search attributes itself, as under compose.
 */
export async function startTemporalCluster(options: TemporalClusterOptions): Promise<RunningTemporal> {
  const log = options.log ?? (() => undefined);
  const { postgres } = options;
  const sqlEnv = {
    ...process.env,
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: postgres.host,
    SQL_PORT: String(postgres.port),
    SQL_USER: postgres.user,
    SQL_PASSWORD: postgres.password,
  };
  for (const db of DATABASES) {
    for (const args of [
      ['create'],
      ['setup-schema', '-v', '0.0'],
      ['update-schema', '-d', path.join(schemaDir(options.serverDir), db.schema, 'versioned')],
    ]) {
      await execFileAsync(sqlTool(options.serverDir), ['--db', db.name, ...args], { env: sqlEnv });
    }
    log(`Temporal database ${db.name}: schema up to date`);
  }
  const ports: Record<string, string> = {};
  for (const name of [
    'FRONTEND_GRPC_PORT',
    'FRONTEND_HTTP_PORT',
    'FRONTEND_MEMBERSHIP_PORT',
    'INTERNAL_FRONTEND_HTTP_PORT',
    'HISTORY_GRPC_PORT',
    'HISTORY_MEMBERSHIP_PORT',
    'MATCHING_GRPC_PORT',
    'MATCHING_MEMBERSHIP_PORT',
    'WORKER_GRPC_PORT',
    'WORKER_MEMBERSHIP_PORT',
  ]) {
    ports[name] = String(await freeLowPort(new Set(Object.values(ports).map(Number))));
  }
  // docker-compose.yml's temporal service: the image runs `temporal-server start` with these variables.
  return launchTemporal({
    what: 'the Temporal server',
    command: serverBinary(options.serverDir),
    args: ['start'],
    env: {
      ...process.env,
      ...ports,
      DB: 'postgres12',
      DB_PORT: String(postgres.port),
      POSTGRES_SEEDS: postgres.host,
      POSTGRES_USER: postgres.user,
      POSTGRES_PWD: postgres.password,
      BIND_ON_IP: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DYNAMIC_CONFIG_FILE_PATH: options.dynamicConfigFile,
    },
    logFile: options.logFile,
    address: `127.0.0.1:${ports.FRONTEND_GRPC_PORT}`,
    ready: (connection) =>
      connection.withDeadline(Date.now() + 2_000, async () => {
        try {
          await connection.workflowService.describeNamespace({ namespace: options.namespace });
          return true;
        } catch {
          // Unknown yet, or just created and not yet in the frontend's namespace cache.
          await connection.workflowService
            .registerNamespace({ namespace: options.namespace, workflowExecutionRetentionPeriod: msToTs('1 day') })
            .catch(() => undefined);
          return false;
        }
      }),
    timeoutMs: 120_000,
    intervalMs: 500,
    stopGraceMs: 15_000,
  });
}
