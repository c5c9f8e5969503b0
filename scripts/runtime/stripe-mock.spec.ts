import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  STRIPE_MOCK_VERSION,
  cachedStripeMockPath,
  ensureStripeMock,
  findStripeMock,
  startStripeMock,
} from './stripe-mock.js';

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

/** A scratch machine: its own tool cache, a PATH of one directory, and a place for other files. */
function machine(): { env: NodeJS.ProcessEnv; cache: string; bin: string; other: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'stripe-mock-spec-'));
  roots.push(root);
  const dirs = { cache: path.join(root, 'cache'), bin: path.join(root, 'bin'), other: path.join(root, 'other') };
  Object.values(dirs).forEach((dir) => mkdirSync(dir));
  return { ...dirs, env: { AGENTSITE_CACHE_DIR: dirs.cache, PATH: dirs.bin } };
}

function script(file: string, body = 'exit 0'): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('findStripeMock', () => {
  it('caches per version under the project tool cache', () => {
    const { env, cache } = machine();
    expect(cachedStripeMockPath(env)).toBe(path.join(cache, `stripe-mock-v${STRIPE_MOCK_VERSION}`, 'stripe-mock'));
    expect(STRIPE_MOCK_VERSION).toBe('0.203.0');
  });

  it('takes STRIPE_MOCK_PATH first, then the tool cache, then PATH, else nothing', () => {
    const { env, bin, other } = machine();
    expect(findStripeMock(env)).toBeUndefined();
    const onPath = script(path.join(bin, 'stripe-mock'));
    expect(findStripeMock(env)).toBe(onPath);
    const cached = script(cachedStripeMockPath(env));
    expect(findStripeMock(env)).toBe(cached);
    const configured = script(path.join(other, 'my-stripe-mock'));
    expect(findStripeMock({ ...env, STRIPE_MOCK_PATH: configured })).toBe(configured);
  });

  it('refuses a STRIPE_MOCK_PATH that is not an executable file, even when another one is there', () => {
    const { env, other } = machine();
    script(cachedStripeMockPath(env));
    const plain = path.join(other, 'stripe-mock');
    writeFileSync(plain, 'not a program');
    expect(() => findStripeMock({ ...env, STRIPE_MOCK_PATH: plain })).toThrow(
      `STRIPE_MOCK_PATH=${plain} is not an executable file`,
    );
    expect(() => findStripeMock({ ...env, STRIPE_MOCK_PATH: other })).toThrow(/is not an executable file/);
    expect(() => findStripeMock({ ...env, STRIPE_MOCK_PATH: path.join(other, 'missing') })).toThrow(
      /is not an executable file/,
    );
  });
});

describe('ensureStripeMock', () => {
  it('says how to get the binary when there is none and no Go to build it, and leaves no lock behind', async () => {
    const { env } = machine();
    const attempt = ensureStripeMock(() => undefined, env);
    await expect(attempt).rejects.toThrow(/no Go toolchain is on PATH/);
    await expect(attempt).rejects.toThrow(/npm run stripe-mock:install/);
    await expect(attempt).rejects.toThrow(/STRIPE_MOCK_PATH=<dir>\/stripe-mock/);
    expect(existsSync(`${path.dirname(cachedStripeMockPath(env))}.lock`)).toBe(false);
  });

  it('waits for the process that holds the build lock and takes its binary', async () => {
    const { env } = machine();
    const target = cachedStripeMockPath(env);
    const lock = `${path.dirname(target)}.lock`;
    mkdirSync(lock, { recursive: true });
    const lines: string[] = [];
    const waiting = ensureStripeMock((line) => lines.push(line), env);
    // The other process finishes: its binary arrives, then its lock goes.
    script(target);
    rmSync(lock, { recursive: true });
    await expect(waiting).resolves.toBe(target);
    expect(lines).toContain('another process is obtaining stripe-mock; waiting for it');
  });

  it('removes a stale lock instead of waiting for it', async () => {
    const { env } = machine();
    const lock = `${path.dirname(cachedStripeMockPath(env))}.lock`;
    mkdirSync(lock, { recursive: true });
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    utimesSync(lock, hourAgo, hourAgo);
    const lines: string[] = [];
    await expect(ensureStripeMock((line) => lines.push(line), env)).rejects.toThrow(/no Go toolchain/);
    expect(lines).toContain('removing a stale build lock of stripe-mock');
  });

  it('builds with go install into GOBIN beside the cache, then moves the binary into the cache', async () => {
    const { env, bin, other } = machine();
    const record = path.join(other, 'go-args');
    // A stand-in for go: records its arguments and GOBIN, and "installs" a binary there.
    script(
      path.join(bin, 'go'),
      `echo "$@ GOBIN=$GOBIN" > ${record}\nprintf '#!/bin/sh\\n' > "$GOBIN/stripe-mock"\n/bin/chmod +x "$GOBIN/stripe-mock"`,
    );
    const target = cachedStripeMockPath(env);
    await expect(ensureStripeMock(() => undefined, env)).resolves.toBe(target);
    const [args, gobin] = readFileSync(record, 'utf8').trim().split(' GOBIN=');
    expect(args).toBe(`install github.com/stripe/stripe-mock@v${STRIPE_MOCK_VERSION}`);
    expect(path.dirname(gobin)).toBe(path.dirname(path.dirname(target)));
    // Staging and lock are gone; only the versioned directory stays.
    expect(readdirSync(path.dirname(path.dirname(target)))).toEqual([`stripe-mock-v${STRIPE_MOCK_VERSION}`]);
    expect(findStripeMock(env)).toBe(target);
  });

  it('reports a failed go install with its output, and caches nothing', async () => {
    const { env, bin } = machine();
    script(path.join(bin, 'go'), 'echo "verifying module: checksum mismatch" >&2\nexit 1');
    await expect(ensureStripeMock(() => undefined, env)).rejects.toThrow(/failed \(exit 1\):\n.*checksum mismatch/);
    expect(findStripeMock(env)).toBeUndefined();
  });
});

describe('startStripeMock', () => {
  it('fails at once, with the output, when the binary exits instead of serving', async () => {
    const { other } = machine();
    const broken = script(path.join(other, 'stripe-mock'), 'echo "error listening at address" >&2\nexit 2');
    const started = Date.now();
    await expect(startStripeMock({ path: broken })).rejects.toThrow(/stopped \(exit 2\):\nerror listening at address/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
