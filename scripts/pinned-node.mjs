#!/usr/bin/env node
/**
 * Runs a command on the project's pinned Node (the version in .node-version, the image's Node).
 *
 *   node scripts/pinned-node.mjs '<shell command>' [args appended to it...]
 *
 * Plain JavaScript, no build: the build itself runs on the Node this chooses. When the machine's Node
 * major is older than the pinned one, the pinned Node is fetched once per machine from the npm
 * registry's binary package `node-<platform>-<arch>@<version>` (through npm, so its registry, proxy
 * and cache settings apply) into the tool cache beside the Temporal CLI, its integrity checked against
 * the registry's, and the command runs with that Node's bin directory first on PATH, so every `node`,
 * `npx`, `tsc` or jest child runs on it. A machine whose Node major is the pinned one or newer runs the
 * command on its own Node. Where no binary package exists for the platform, a one-line warning and the
 * machine's Node.
 *
 * Also imported by scripts/run-tests.ts (`pinnedNodeEnv`), so `node dist/scripts/run-tests.js` run by
 * hand on an older Node moves onto the pinned one as `npm test` does.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Set by the launcher for its children: the machine's own Node version (tests compare against it). */
export const MACHINE_NODE_VARIABLE = 'AGENTSITE_MACHINE_NODE';
const STALE_LOCK_MS = 15 * 60_000;

/** The pinned Node version: .node-version at the project's root (also the Dockerfile's base image). */
export function pinnedNodeVersion(root = ROOT) {
  const version = readFileSync(path.join(root, '.node-version'), 'utf8').trim().replace(/^v/, '');
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(`.node-version must hold a version such as 24.18.0, not "${version}"`);
  }
  return version;
}

export const major = (version) => Number(version.replace(/^v/, '').split('.')[0]);

/** The tool cache of scripts/runtime/tool-cache.ts (the same variables, the same default). */
export function toolCacheDir(env = process.env) {
  return env.AGENTSITE_CACHE_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'agentsite');
}

function runnable(file) {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** npm, with the machine's settings (registry, proxy, cache); JSON answer. */
function npmJson(args, cwd) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  return JSON.parse(
    execFileSync(npm, [...args, '--json'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
  );
}

/** Whether the registry has this package version; its dist.integrity if so. */
function registryIntegrity(spec) {
  try {
    const integrity = npmJson(['view', spec, 'dist.integrity'], homedir());
    return typeof integrity === 'string' ? integrity : undefined;
  } catch {
    return undefined;
  }
}

/** Downloads the package into a staging directory, checks its integrity, unpacks it; returns the `package` directory. */
function download(spec, integrity, staging, log) {
  log(`agentsite: downloading ${spec} from the npm registry (once per machine, ~50 MB)`);
  const [packed] = npmJson(['pack', spec, '--pack-destination', staging], staging);
  const tarball = path.join(staging, packed.filename);
  const [algorithm, expected] = integrity.split('-', 2);
  const actual = createHash(algorithm).update(readFileSync(tarball)).digest('base64');
  if (actual !== expected) {
    throw new Error(`${spec}: the downloaded tarball's ${algorithm} does not match the registry's integrity`);
  }
  execFileSync('tar', ['-xzf', tarball, '-C', staging]);
  const unpacked = path.join(staging, 'package');
  if (!runnable(path.join(unpacked, 'bin', 'node'))) {
    throw new Error(`${spec} holds no runnable bin/node`);
  }
  return unpacked;
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The pinned Node's bin directory in the tool cache, obtained once per machine: a directory lock
 * (mkdir is atomic; a stale one removed), a staging directory on the cache's file system, and a rename
 * into place, so no process ever runs half a Node. Undefined when the registry has no package for
 * this platform.
 */
export function ensurePinnedNode(version, env = process.env, log = console.error) {
  const spec = `node-${process.platform}-${process.arch}@${version}`;
  const target = path.join(toolCacheDir(env), `node-v${version}-${process.platform}-${process.arch}`);
  const binary = path.join(target, 'bin', 'node');
  if (runnable(binary)) {
    return path.dirname(binary);
  }
  mkdirSync(path.dirname(target), { recursive: true });
  const lock = `${target}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') {
        throw err;
      }
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > STALE_LOCK_MS) {
        rmSync(lock, { recursive: true, force: true });
      } else {
        log(`agentsite: another process is fetching Node ${version}; waiting for it`);
        while (
          existsSync(lock) &&
          Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) <= STALE_LOCK_MS
        ) {
          sleep(1_000);
        }
      }
      if (runnable(binary)) {
        return path.dirname(binary);
      }
    }
  }
  try {
    if (runnable(binary)) {
      return path.dirname(binary);
    }
    const integrity = registryIntegrity(spec);
    if (integrity === undefined) {
      return undefined;
    }
    const staging = mkdtempSync(`${target}.download-`);
    try {
      const unpacked = download(spec, integrity, staging, log);
      rmSync(target, { recursive: true, force: true }); // what an interrupted attempt left
      renameSync(unpacked, target);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    return path.dirname(binary);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The environment to run a command in on the pinned Node, or undefined when the machine's Node will
 * do (its major is the pinned one or newer, or it already is the pinned Node). Says in one line what it chose.
 */
export function pinnedNodeEnv(env = process.env, log = console.error) {
  const version = pinnedNodeVersion();
  const machine = env[MACHINE_NODE_VARIABLE] ?? process.versions.node;
  if (major(process.versions.node) >= major(version)) {
    return undefined;
  }
  const bin = ensurePinnedNode(version, env, log);
  if (bin === undefined) {
    log(
      `agentsite: warning: the npm registry has no Node ${version} for ${process.platform}-${process.arch}; ` +
        `running on this machine's Node ${machine} (older than the image's)`,
    );
    return undefined;
  }
  log(`agentsite: running on Node ${version} from the tool cache (this machine has ${machine})`);
  return { ...env, PATH: `${bin}${path.delimiter}${env.PATH ?? ''}`, [MACHINE_NODE_VARIABLE]: machine };
}

/** Quotes an argument for sh, so arguments npm appends (`npm test -- <file>`) arrive as given. */
const shellQuote = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`);

function main() {
  const [command, ...extra] = process.argv.slice(2);
  if (command === undefined || command === '--help') {
    console.log("usage: node scripts/pinned-node.mjs '<shell command>' [arguments appended to it]");
    console.log(
      'Runs the command on the Node in .node-version (fetched into the tool cache when this machine has an older one).',
    );
    process.exit(command === undefined ? 2 : 0);
  }
  const env = pinnedNodeEnv() ?? {
    ...process.env,
    [MACHINE_NODE_VARIABLE]: process.env[MACHINE_NODE_VARIABLE] ?? process.versions.node,
  };
  const child = spawn([command, ...extra.map(shellQuote)].join(' '), {
    shell: true,
    stdio: 'inherit',
    env,
    cwd: process.cwd(),
  });
  // The terminal's Ctrl-C reaches the whole group; a signal sent to this process alone is passed on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    console.error(`agentsite: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
