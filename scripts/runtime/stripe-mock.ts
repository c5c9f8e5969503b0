/**
 * Stripe's `stripe-mock` (a Go binary that answers the Stripe API from fixtures), obtained once per
 * machine like the Temporal CLI: STRIPE_MOCK_PATH, else the project's tool cache, else PATH, else
 * `go install` into the tool cache.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { executable, onPath } from './executables.js';
import { StopWaiting, stopChild, waitFor } from './processes.js';
import { goInstall, type Log, obtainOnce, toolCacheDir } from './tool-cache.js';

export const STRIPE_MOCK_VERSION = '0.203.0';
const GO_MODULE = `github.com/stripe/stripe-mock@v${STRIPE_MOCK_VERSION}`;
/** A build takes one to three minutes here; a lock this old belongs to a process that died. */
const STALE_LOCK_MS = 20 * 60_000;
const START_TIMEOUT_MS = 30_000;

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
  return (
    findStripeMock(env) ??
    obtainOnce({
      target: cachedStripeMockPath(env),
      name: 'stripe-mock',
      staleLockMs: STALE_LOCK_MS,
      log,
      obtain: (staging) => {
        const go = onPath('go', env);
        if (go === undefined) {
          throw new Error(
            `stripe-mock v${STRIPE_MOCK_VERSION} is not installed and no Go toolchain is on PATH to build it. Either ` +
              `install Go (https://go.dev/dl/) and run "npm run stripe-mock:install", or build it elsewhere with ` +
              `"GOBIN=<dir> go install ${GO_MODULE}" and set STRIPE_MOCK_PATH=<dir>/stripe-mock (or put stripe-mock on PATH).`,
          );
        }
        return goInstall({
          go,
          module: GO_MODULE,
          binary: 'stripe-mock',
          gobin: staging,
          name: 'stripe-mock',
          log,
          env,
        });
      },
    })
  );
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
