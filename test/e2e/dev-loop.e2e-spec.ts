import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, stopChild, waitFor } from '../../scripts/runtime/processes.js';
import { testEnv } from '../setup/shared-runtime.js';
import { expectError, rawRequest } from '../utils/http.js';
import { TEST_JWT_SECRET, TEST_VAULT_KEY } from '../utils/stack.js';
import { TEST_PAYLOAD_KEY } from '../utils/temporal.js';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const repoRoot = path.dirname(distRoot);

interface Dev {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm run dev` as its last step runs it; `--no-tsc`: the test changes dist/ itself instead of sources. */
function startDev(env: Record<string, string>, args = ['--no-tsc'], cwd = repoRoot): Dev {
  const child = spawn(process.execPath, [path.join(distRoot, 'scripts', 'dev.js'), ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** The pids the supervisor reported for a child, in order (`[dev] api running (pid 123)`). */
function pids(output: string, name: string): number[] {
  return [...output.matchAll(new RegExp(`\\[dev\\] ${name} running \\(pid (\\d+)\\)`, 'g'))].map((m) => Number(m[1]));
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm run dev: the API and the worker restarted on change (e2e)', () => {
  let port: number;
  let env: Record<string, string>;
  let dev: Dev | undefined;

  beforeAll(async () => {
    port = await freePort();
    const dir = path.join(testEnv('workDir'), `dev-${randomUUID().slice(0, 8)}`);
    mkdirSync(dir, { recursive: true });
    env = {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dir,
      DATABASE_URL: testEnv('databaseUrl'),
      TEMPORAL_ADDRESS: testEnv('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `test-dev-${randomUUID().slice(0, 8)}`,
      JWT_SECRET: TEST_JWT_SECRET,
      VAULT_KEY: TEST_VAULT_KEY,
      TEMPORAL_CODEC_KEY: TEST_PAYLOAD_KEY,
      DEMO_SITE_PORT: '0',
    };
  });

  afterAll(async () => {
    if (dev !== undefined) {
      await stopChild(dev.child, 20_000);
    }
  });

  it('refuses to start without a running PostgreSQL, saying what to start', async () => {
    const closed = await freePort();
    const refused = startDev({ ...env, DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${closed}/agentsite` });
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain(`PostgreSQL does not answer at 127.0.0.1:${closed}`);
    expect(refused.output()).toContain('npm run dev:services');
  });

  it('reads .env from the directory it runs in, the environment winning over it', async () => {
    const [fromFile, fromEnvironment] = [await freePort(), await freePort()];
    const project = path.join(testEnv('workDir'), `dev-dotenv-${randomUUID().slice(0, 8)}`);
    mkdirSync(project, { recursive: true });
    copyFileSync(path.join(repoRoot, 'nest-cli.json'), path.join(project, 'nest-cli.json'));
    writeFileSync(
      path.join(project, '.env'),
      `DATABASE_URL=postgres://postgres:postgres@127.0.0.1:${fromFile}/agentsite\nPORT=${port}\n`,
    );
    const { DATABASE_URL: _unset, PORT: _alsoUnset, ...withoutThem } = env;
    const fileOnly = startDev(withoutThem, ['--no-tsc'], project);
    expect(await fileOnly.exited).toBe(1);
    expect(fileOnly.output()).toContain(
      `[dev] settings read from ${path.join(project, '.env')} (the environment wins over it)`,
    );
    expect(fileOnly.output()).toContain(`PostgreSQL does not answer at 127.0.0.1:${fromFile}`);
    const overridden = startDev(
      { ...withoutThem, DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${fromEnvironment}/agentsite` },
      ['--no-tsc'],
      project,
    );
    expect(await overridden.exited).toBe(1);
    expect(overridden.output()).toContain(`PostgreSQL does not answer at 127.0.0.1:${fromEnvironment}`);
  });

  it('runs both, restarts both when the compiled code changes, and stops them with itself', async () => {
    dev = startDev(env);
    const running = dev;
    const api = (): Promise<boolean> =>
      rawRequest(`http://127.0.0.1:${port}`, 'GET', '/api/me').then(
        (answer) => {
          expectError(answer, 'UNAUTHORIZED', 401);
          return true;
        },
        () => false,
      );
    await waitFor('the dev API', api, 60_000, 200);
    await waitFor('the worker', async () => pids(running.output(), 'worker').length === 1, 30_000, 100);
    const [firstApi] = pids(running.output(), 'api');
    const [firstWorker] = pids(running.output(), 'worker');

    // What tsc does on a rebuild, as far as the watcher sees: files under dist/src written anew.
    const now = new Date();
    utimesSync(path.join(distRoot, 'src', 'main.js'), now, now);
    await waitFor(
      'the restart',
      async () => pids(running.output(), 'api').length === 2 && pids(running.output(), 'worker').length === 2,
      60_000,
      100,
    );
    expect(running.output()).toContain('[dev] changed: src/main.js; restarting the API and the worker');
    // The old processes are gone (stopped, not crashed), the new ones serve.
    expect(alive(firstApi!)).toBe(false);
    expect(alive(firstWorker!)).toBe(false);
    expect(running.output()).not.toContain('exited (');
    await waitFor('the restarted API', api, 60_000, 200);

    const [, secondApi] = pids(running.output(), 'api');
    const [, secondWorker] = pids(running.output(), 'worker');
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    dev = undefined;
    expect(running.output()).toContain('[dev] stopped');
    expect(alive(secondApi!)).toBe(false);
    expect(alive(secondWorker!)).toBe(false);
  });
});
