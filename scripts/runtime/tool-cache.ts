/**
 * The project's tool cache: binaries the scripts obtain once per machine (the Temporal CLI,
 * stripe-mock) and reuse from every clone. One process obtains a tool; the others wait for its result.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { executable } from './executables.js';
import { waitFor } from './processes.js';

export type Log = (line: string) => void;

/** Where the project caches its tools: outside the clone, so fresh clones on this machine reuse them. */
export function toolCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENTSITE_CACHE_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'agentsite');
}

export interface ObtainOnce {
  /** The binary's final path in the tool cache. */
  target: string;
  /** What the log calls it, e.g. "the Temporal CLI". */
  name: string;
  /** A lock older than this belongs to a process that died. */
  staleLockMs: number;
  log: Log;
  /** Whether the target is complete (default: an executable file); a directory of tools says its own. */
  ready?: (target: string) => boolean;
  /** Puts the binary into `staging` (a fresh directory on the cache's file system); returns its path. */
  obtain(staging: string): Promise<string>;
}

/**
 * Obtains a tool once per machine: a directory lock beside the target (mkdir is atomic), a stale lock
 * removed, a waiting process taking the holder's result, and the binary moved into place by a rename
 * from a staging directory on the same file system, so no process ever sees half a binary.
 */
export async function obtainOnce(options: ObtainOnce): Promise<string> {
  const { target, name, staleLockMs, log } = options;
  const ready = options.ready ?? executable;
  const dir = path.dirname(target);
  mkdirSync(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  while (true) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err;
      }
      if (Date.now() - statSync(lock).mtimeMs > staleLockMs) {
        log(`removing a stale build lock of ${name}`);
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      log(`another process is obtaining ${name}; waiting for it`);
      await waitFor(`${name} from another process`, async () => !existsSync(lock), staleLockMs, 1_000);
    }
    if (ready(target)) {
      return target;
    }
  }
  try {
    // The lock's holder may have finished between our look and our lock.
    if (ready(target)) {
      return target;
    }
    const staging = mkdtempSync(`${dir}.build-`);
    try {
      const built = await options.obtain(staging);
      mkdirSync(dir, { recursive: true });
      rmSync(target, { recursive: true, force: true }); // what an interrupted attempt left
      renameSync(built, target);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    log(`${name} ready at ${target}`);
    return target;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `go install <module>` into `gobin`, its output logged, a line every 30 s; resolves with the binary's path. */
export async function goInstall(options: {
  go: string;
  module: string;
  binary: string;
  gobin: string;
  name: string;
  log: Log;
  env: NodeJS.ProcessEnv;
}): Promise<string> {
  const { go, module, gobin, name, log, env } = options;
  log(`building ${name} with: go install ${module} (one time per machine)`);
  const started = Date.now();
  const child = spawn(go, ['install', module], {
    env: { ...env, GOBIN: gobin, CGO_ENABLED: env.CGO_ENABLED ?? '0' },
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
    () => log(`  still building ${name} (${Math.round((Date.now() - started) / 1000)} s)`),
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
  const built = path.join(gobin, options.binary);
  if (code !== 0 || !executable(built)) {
    throw new Error(`go install ${module} failed (exit ${code}):\n${tail}`);
  }
  log(`${name} built in ${Math.round((Date.now() - started) / 1000)} s`);
  return built;
}
