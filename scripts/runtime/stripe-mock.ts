/**
 * Stripe's `stripe-mock` (a Go binary that answers the Stripe API from fixtures), obtained once per
 * machine like the Temporal CLI: STRIPE_MOCK_PATH, else the project's tool cache, else PATH, else
 * `go install` into the tool cache.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { executable, onPath } from './executables.js';
import { StopWaiting, stopChild, waitFor } from './processes.js';
import { toolCacheDir } from './temporal.js';

export const STRIPE_MOCK_VERSION = '0.203.0';
const GO_MODULE = `github.com/stripe/stripe-mock@v${STRIPE_MOCK_VERSION}`;
/** A build takes one to three minutes here; a lock this old belongs to a process that died. */
const STALE_LOCK_MS = 20 * 60_000;
const START_TIMEOUT_MS = 30_000;

type Log = (line: string) => void;

export function cachedStripeMockPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(toolCacheDir(env), `stripe-mock-v${STRIPE_MOCK_VERSION}`, 'stripe-mock');
}

/**
 * Finds stripe-mock: STRIPE_MOCK_PATH (refused when it is not an executable file), the project's
 * tool cache, then PATH. Undefined when none is there (`ensureStripeMock` builds one).
 */
export function findStripeMock(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env.STRIPE_MOCK_PATH?.trim();
  if (configured) {
    if (!executable(configured)) {
      throw new Error(
        `STRIPE_MOCK_PATH=${configured} is not an executable file: point it at a stripe-mock binary, or unset it ` +
          `to use ${cachedStripeMockPath(env)} (npm run stripe-mock:install builds it there)`,
      );
    }
    return configured;
  }
  const cached = cachedStripeMockPath(env);
  if (executable(cached)) {
    return cached;
  }
  return onPath('stripe-mock', env);
}

/** Finds stripe-mock, or builds it once per machine into the tool cache. */
export async function ensureStripeMock(log: Log, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return findStripeMock(env) ?? buildStripeMock(log, env);
}

async function buildStripeMock(log: Log, env: NodeJS.ProcessEnv): Promise<string> {
  const target = cachedStripeMockPath(env);
  const dir = path.dirname(target);
  mkdirSync(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  // One build per machine: a second process waits for the first one's result.
  while (true) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err;
      }
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) {
        log('removing a stale stripe-mock build lock');
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      log('another process is building stripe-mock; waiting for it');
      await waitFor('stripe-mock from another process', async () => !existsSync(lock), STALE_LOCK_MS, 1_000);
    }
    if (executable(target)) {
      return target;
    }
  }
  try {
    // The lock's holder may have finished between our look and our lock.
    if (executable(target)) {
      return target;
    }
    const go = onPath('go', env);
    if (go === undefined) {
      throw new Error(
        `stripe-mock v${STRIPE_MOCK_VERSION} is not installed and no Go toolchain is on PATH to build it. Either ` +
          `install Go (https://go.dev/dl/) and run "npm run stripe-mock:install", or build it elsewhere with ` +
          `"GOBIN=<dir> go install ${GO_MODULE}" and set STRIPE_MOCK_PATH=<dir>/stripe-mock (or put stripe-mock on PATH).`,
      );
    }
    // GOBIN beside the cache, on the same file system, so the finished binary arrives by an atomic rename.
    const staging = mkdtempSync(`${dir}.build-`);
    try {
      await goInstall(go, staging, log, env);
      mkdirSync(dir, { recursive: true });
      renameSync(path.join(staging, 'stripe-mock'), target);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    log(`stripe-mock ready at ${target}`);
    return target;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function goInstall(go: string, staging: string, log: Log, env: NodeJS.ProcessEnv): Promise<void> {
  log(`building stripe-mock with: go install ${GO_MODULE} (one time per machine)`);
  const started = Date.now();
  const child = spawn(go, ['install', GO_MODULE], {
    env: { ...env, GOBIN: staging, CGO_ENABLED: env.CGO_ENABLED ?? '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const onOutput = (chunk: Buffer): void => {
    const text = chunk.toString();
    tail = (tail + text).slice(-4000);
    for (const line of text.split('\n').filter(Boolean)) {
      log(`  ${line}`);
    }
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const ticker = setInterval(
    () => log(`  still building stripe-mock (${Math.round((Date.now() - started) / 1000)} s)`),
    30_000,
  );
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      tail += String(err);
      resolve(null);
    });
    child.on('exit', resolve);
  });
  clearInterval(ticker);
  if (code !== 0 || !executable(path.join(staging, 'stripe-mock'))) {
    throw new Error(`go install ${GO_MODULE} failed (exit ${code}):\n${tail}`);
  }
  log(`stripe-mock built in ${Math.round((Date.now() - started) / 1000)} s`);
}

export interface StripeMockOptions {
  /** The binary (from `ensureStripeMock`). */
  path: string;
  /** Omitted: the system chooses a free port (no race with other processes on the machine). */
  port?: number;
  /** Where its output goes; omitted: kept in memory for the error message of a failed start. */
  logFile?: string;
}

export interface RunningStripeMock {
  /** e.g. http://127.0.0.1:43121 (what STRIPE_API_BASE takes). */
  apiBase: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const LISTENING_HTTP = /Listening for HTTP at address: (\S+:(\d+))/;

/** Starts stripe-mock on 127.0.0.1 (plain HTTP) and waits until it answers an authenticated request. */
export async function startStripeMock(options: StripeMockOptions): Promise<RunningStripeMock> {
  // -http-addr alone still opens HTTPS on the fixed port 12112 (only -http/-http-port turn it off), which
  // a second stripe-mock on the machine could not bind: HTTPS gets a port of the system's choosing.
  const args = ['-http-addr', `127.0.0.1:${options.port ?? ''}`, '-https-addr', '127.0.0.1:'];
  const child = spawn(options.path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const logStream = options.logFile === undefined ? undefined : createWriteStream(options.logFile, { flags: 'a' });
  let output = '';
  let port: number | undefined;
  const onOutput = (chunk: Buffer): void => {
    logStream?.write(chunk);
    output = (output + chunk.toString()).slice(-4000);
    port ??= Number(LISTENING_HTTP.exec(output)?.[2]) || undefined;
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  let exited: string | undefined;
  child.on('error', (err) => {
    exited = err.message;
  });
  child.on('exit', (code, signal) => {
    exited = `exit ${code ?? signal}`;
  });
  const apiBase = (): string => `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'stripe-mock',
      async () => {
        if (exited !== undefined) {
          throw new StopWaiting(`stripe-mock (${options.path}) stopped (${exited}):\n${output}`);
        }
        if (port === undefined) {
          return false;
        }
        const res = await fetch(`${apiBase()}/v1/customers`, {
          headers: { Authorization: 'Bearer sk_test_ready' },
          signal: AbortSignal.timeout(2_000),
        });
        await res.arrayBuffer();
        return res.status === 200;
      },
      START_TIMEOUT_MS,
      100,
    );
  } catch (err) {
    await stopChild(child, 2_000);
    logStream?.end();
    throw err;
  }
  return {
    apiBase: apiBase(),
    process: child,
    stop: async () => {
      await stopChild(child, 5_000);
      logStream?.end();
    },
  };
}
