import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopChild, StopWaiting, waitFor } from '../../scripts/runtime/processes.js';
import { testEnv } from '../setup/shared-runtime.js';
import { TEST_PAYLOAD_KEY } from './temporal.js';
import { describeEndpoint } from './http.js';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A JWT secret known to the tests, so they can mint expired or foreign tokens. */
export const TEST_JWT_SECRET = 'test-secret-for-the-e2e-suites-only-0123456789';
/** One vault key for every stack, so processes of different stacks can open each other's entries. */
export const TEST_VAULT_KEY = `t1:${Buffer.alloc(32, 42).toString('base64')}`;

/** The readiness reason of a stack without a worker: PostgreSQL and Temporal answer, nothing polls. */
const NO_WORKER = 'no worker polls the task queue';

export interface StackOptions {
  env?: Record<string, string>;
  /** Start a worker process too (default true). */
  worker?: boolean;
  /** Wait only until the API answers /api/health/ready at all (for tests of a degraded service). */
  anyHealth?: boolean;
  /** A task queue of this stack's own (default: unique), so stacks of parallel test files never share workers. */
  taskQueue?: string;
  /** Give the stack's worker its own HTTP server (WORKER_HTTP_PORT on a free port): see workerHttpUrl. */
  workerHttp?: boolean;
  /** Node flags for the worker alone (benchmark 5: its inspector, to collect its garbage before reading its memory). */
  workerNodeArgs?: string[];
}

export interface ProcessHandle {
  child: ChildProcess;
  logFile: string;
}

/** Whether the API process has logged that it listens (src/main.ts writes the line once listen succeeded). */
export function apiListening(api: ProcessHandle): boolean {
  return existsSync(api.logFile) && readFileSync(api.logFile, 'utf8').includes('API listening on');
}

/** One API (and worker) of the real service, as separate processes, on the shared PostgreSQL and Temporal. */
export class Stack {
  readonly baseUrl: string;
  api: ProcessHandle;
  worker: ProcessHandle | undefined;
  /** The worker's HTTP server (health, metrics), when started with `workerHttp`; only the first worker has one. */
  workerHttpPort: number | undefined;
  private workerNodeArgs: string[] = [];

  private constructor(
    readonly port: number,
    readonly env: NodeJS.ProcessEnv,
    readonly dir: string,
  ) {
    this.baseUrl = `http://127.0.0.1:${port}`;
    describeEndpoint.set(this.baseUrl, () => {
      const child = this.api.child;
      const state =
        child.exitCode !== null || child.signalCode !== null
          ? `exited (${child.exitCode ?? child.signalCode})`
          : `running (pid ${child.pid})`;
      return `the suite's API there is ${state}; the end of its log:\n${readFileSync(this.api.logFile, 'utf8').slice(-1500)}`;
    });
  }

  static async start(options: StackOptions = {}): Promise<Stack> {
    // A free port can be taken by another process between freePort() and the API's listen (other
    // suites, other test runs on the machine): that start is retried on a new port.
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await Stack.startOnce(options);
      } catch (err) {
        if (attempt >= 3 || !String(err instanceof Error ? err.message : err).includes('EADDRINUSE')) {
          throw err;
        }
      }
    }
  }

  private static async startOnce(options: StackOptions): Promise<Stack> {
    const port = await freePort();
    const id = randomUUID().slice(0, 8);
    const dir = path.join(testEnv('workDir'), `stack-${id}`);
    mkdirSync(dir, { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dir,
      DATABASE_URL: testEnv('databaseUrl'),
      TEMPORAL_ADDRESS: testEnv('temporalAddress'),
      TEMPORAL_TASK_QUEUE: options.taskQueue ?? `test-${id}`,
      JWT_SECRET: TEST_JWT_SECRET,
      VAULT_KEY: TEST_VAULT_KEY,
      // Set explicitly, as production must: tests' own clients (test/utils/temporal.ts) read runs with it.
      TEMPORAL_CODEC_KEY: TEST_PAYLOAD_KEY,
      LOG_LEVEL: 'log',
      RATE_LIMIT_PER_IP: '100000',
      RATE_LIMIT_PER_USER: '100000',
      // The suites buy credits and tiers with test cards; a stack may turn this off with '' values.
      PAYMENT_PROVIDER: 'test',
      ALLOW_TEST_PAYMENTS: 'true',
      AUTH_ATTEMPTS_PER_IP: '100000',
      REGISTRATIONS_PER_ADDRESS_PER_DAY: '100000',
      // The lowest scrypt cost the settings accept: the suites register hundreds of users, and at the
      // default (2^17, ~0.3 s of a core each) that alone would take minutes. settings.spec proves the default.
      PASSWORD_SCRYPT_N: '16384',
      ...options.env,
    };
    const stack = new Stack(port, env, dir);
    stack.workerHttpPort = options.workerHttp === true ? await freePort() : undefined;
    stack.workerNodeArgs = options.workerNodeArgs ?? [];
    stack.api = stack.spawn('api', 'src/main.js');
    if (options.worker !== false) {
      stack.worker = stack.spawnWorker();
    }
    try {
      await stack.waitHealthy(options.worker !== false, options.anyHealth === true);
    } catch (err) {
      await stack.stop().catch(() => undefined);
      throw err;
    }
    return stack;
  }

  get workerHttpUrl(): string {
    if (this.workerHttpPort === undefined) {
      throw new Error('the stack was started without workerHttp');
    }
    return `http://127.0.0.1:${this.workerHttpPort}`;
  }

  /** The stack's worker, with its HTTP server's port when the stack has one (never in the shared env: cluster workers would collide). */
  private spawnWorker(): ProcessHandle {
    return this.spawn(
      'worker',
      'src/worker.js',
      this.workerHttpPort === undefined ? {} : { WORKER_HTTP_PORT: String(this.workerHttpPort) },
      this.workerNodeArgs,
    );
  }

  /** Spawns one of the service's entry points with this stack's environment. */
  spawn(
    name: string,
    entry: string,
    extraEnv: Record<string, string> = {},
    extraNodeArgs: string[] = [],
  ): ProcessHandle {
    const logFile = path.join(this.dir, `${name}-${Date.now()}.log`);
    const out: WriteStream = createWriteStream(logFile);
    // AGENTSITE_NODE_ARGS: extra node flags, as for `npm start` (e.g. --cpu-prof when profiling a benchmark).
    const nodeArgs = [...(process.env.AGENTSITE_NODE_ARGS ?? '').split(' ').filter(Boolean), ...extraNodeArgs];
    const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, path.join(distRoot, entry)], {
      env: { ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    return { child, logFile };
  }

  async waitHealthy(needWorker: boolean, anyAnswer = false): Promise<void> {
    const api = this.api.child;
    await waitFor(
      `API on ${this.baseUrl}`,
      async () => {
        if (api.exitCode !== null) {
          // An API that exited will not answer: stop waiting at once, with its last words.
          throw new StopWaiting(
            `API exited with ${api.exitCode}:\n${readFileSync(this.api.logFile, 'utf8').slice(-3000)}`,
          );
        }
        // Our own API holds the port (it logs this line once listen succeeded): a port taken meanwhile
        // by another suite's API would otherwise answer these probes, and the tests would talk to it.
        // Under LOG_LEVEL warn or error (the benchmarks) the line is not written: the probe alone then.
        const logsListening = !['warn', 'error'].includes(this.env.LOG_LEVEL ?? 'log');
        if (logsListening && !apiListening(this.api)) {
          return false;
        }
        // The readiness probe, which no limit counts (GET /api/health is per-address limited, and
        // suites with small limits would start with points spent).
        const res = await fetch(`${this.baseUrl}/api/health/ready`);
        if (anyAnswer) {
          return true;
        }
        const body = (await res.json()) as { reasons?: string[] };
        const waiting = (body.reasons ?? []).filter((reason) => needWorker || reason !== NO_WORKER);
        return (res.status === 200 || res.status === 503) && waiting.length === 0;
      },
      60_000,
      150,
    );
  }

  /** Stops and starts the API process (same port, same database): state must survive. */
  async restartApi(): Promise<void> {
    await stopChild(this.api.child);
    this.api = this.spawn('api', 'src/main.js');
    await this.waitHealthy(false);
  }

  /** Stops the worker (in-flight tasks finish first); accepted work waits in Temporal until startWorker(). */
  async stopWorker(): Promise<void> {
    if (this.worker !== undefined) {
      await stopChild(this.worker.child);
      this.worker = undefined;
    }
  }

  async startWorker(): Promise<void> {
    this.worker = this.spawnWorker();
    await this.waitHealthy(true);
  }

  logs(): string {
    return [this.api, this.worker]
      .filter((p): p is ProcessHandle => p !== undefined)
      .map((p) => readFileSync(p.logFile, 'utf8'))
      .join('\n');
  }

  /**
   * The lines of every process this stack ever spawned (killed ones too, oldest first) that mention
   * `needle` or are warnings and errors, each cut to 400 characters, at most `limit` of them (the last).
   */
  linesAbout(needle: string, limit = 80): string {
    const lines = readdirSync(this.dir)
      .filter((name) => name.endsWith('.log'))
      .sort((a, b) => Number(/-(\d+)\.log$/.exec(a)?.[1]) - Number(/-(\d+)\.log$/.exec(b)?.[1]))
      .flatMap((name) =>
        readFileSync(path.join(this.dir, name), 'utf8')
          .split('\n')
          .filter((line) => line.includes(needle) || /"level":"(warn|error|fatal)"/.test(line))
          .map((line) => `${name}: ${line.slice(0, 400)}`),
      );
    return lines.slice(-limit).join('\n');
  }

  /** `err` with the stack's lines about `needle` appended: what a failed wait on a run shows. */
  explain(err: unknown, needle: string): Error {
    const message = err instanceof Error ? err.message : String(err);
    return new Error(`${message}\n--- the stack's log lines about ${needle}:\n${this.linesAbout(needle)}`);
  }

  async stop(): Promise<void> {
    await Promise.all([stopChild(this.api.child), this.worker ? stopChild(this.worker.child) : Promise.resolve()]);
  }
}
