import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { freePort, portOpen, waitFor } from '../../scripts/runtime/processes.js';
import { startEmbeddedPostgres } from '../../scripts/runtime/postgres.js';
import { FakeModel } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerAdmin } from '../utils/admin.js';
import { Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { TEST_JWT_SECRET, TEST_VAULT_KEY } from '../utils/stack.js';
import { registerUser, TEST_PASSWORD, uniqueEmail } from '../utils/users.js';
import { temporalClient } from '../utils/temporal.js';

const startScript = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'start.js');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `npm start`'s script as a user would, and waits for its "ready" line. */
async function start(env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [startScript], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(
    'npm start to be ready',
    async () => {
      if (child.exitCode !== null) {
        throw new Error(`start exited ${child.exitCode}:\n${output.slice(-3000)}`);
      }
      // The last line of the ready summary (printed in one write, see scripts/start.ts).
      return output.includes('[start] press Ctrl-C to stop');
    },
    120_000,
    200,
  );
  return { child, output: () => output, exited };
}

/**
 * The local addresses listening on a TCP port, as the kernel lists them (/proc/net/tcp and tcp6): no
 * connection to a non-loopback address is needed to see which interfaces a server took.
 */
function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      const [hex, portHex] = (local ?? '').split(':');
      if (state !== '0A' || hex === undefined || Number.parseInt(portHex ?? '', 16) !== port) {
        continue; // 0A: LISTEN
      }
      if (hex.length === 8) {
        addresses.push(
          [...Buffer.from(hex, 'hex')]
            .reverse()
            .map((byte) => String(byte))
            .join('.'),
        );
      } else {
        addresses.push(/^0+$/.test(hex) ? '::' : hex === '00000000000000000000000001000000' ? '::1' : hex);
      }
    }
  }
  return addresses.sort();
}

/** Whether PostgreSQL at this port takes the password for its `postgres` user (false: invalid_password). */
async function acceptsPassword(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '28P01') {
      return false;
    }
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('npm start (e2e)', () => {
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const child of running) {
      child.kill('SIGKILL');
    }
  });

  it('brings up PostgreSQL, Temporal with its UI, the API and the worker; Ctrl-C stops all; data survives', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'agentsite-start-'));
    const [apiPort, pgPort, temporalPort, uiPort, demoPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(apiPort),
      EMBEDDED_POSTGRES_PORT: String(pgPort),
      TEMPORAL_DEV_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      DEMO_SITE_PORT: String(demoPort),
      TEMPORAL_CLI_PATH: testEnv('temporalCli'),
      RUN_HISTORY_RETENTION_DAYS: '3',
    };
    const http = new Http(`http://127.0.0.1:${apiPort}`);

    const first = await start(env);
    running.push(first.child);
    expect(first.output()).toContain(`[start] Console     http://localhost:${apiPort}/`);
    expect(first.output()).toContain(`[start] API         http://localhost:${apiPort}/api`);
    expect(first.output()).toContain(`[start] OpenAPI     http://localhost:${apiPort}/api/docs`);
    expect(first.output()).toContain(`[start] Temporal UI http://localhost:${uiPort}`);
    // npm start serves the console it built.
    const consolePage = await fetch(`http://127.0.0.1:${apiPort}/`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain('<div id="root"></div>');
    const health = await http.get('/api/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', database: { status: 'up' }, temporal: { status: 'up' } });
    const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(ui.status).toBe(200);
    // The dev UI decodes payloads through the API's codec endpoint.
    const uiSettings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as {
      Codec?: { Endpoint?: string };
    };
    expect(uiSettings.Codec?.Endpoint).toBe(`http://localhost:${apiPort}/api/temporal-codec`);

    expect(first.output()).toContain(`[start] Demo site   https://localhost:${demoPort}`);
    // The console's landing suggests it to a new visitor (public, read-only).
    const about = await http.get('/api/about');
    expect(about.status).toBe(200);
    expect(about.body).toEqual({ demoSiteUrl: `https://localhost:${demoPort}` });
    // The API (with the test payment provider on) listens on loopback only, as do PostgreSQL and Temporal.
    expect(first.output()).toContain('[start] payments: the test provider');
    expect(listeningAddresses(apiPort)).toEqual(['127.0.0.1']);
    expect(listeningAddresses(pgPort)).toEqual(['127.0.0.1']);
    // The embedded PostgreSQL's password: generated into DATA_DIR (0600), never printed, the fixed one refused.
    const passwordFile = path.join(dataDir, 'postgres-password');
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    const pgPassword = readFileSync(passwordFile, 'utf8').trim();
    expect(pgPassword).toMatch(/^[0-9a-f]{48}$/);
    expect(first.output()).not.toContain(pgPassword);
    expect(await acceptsPassword(pgPort, pgPassword)).toBe(true);
    expect(await acceptsPassword(pgPort, 'postgres')).toBe(false);
    const email = uniqueEmail();
    const registered = await http.post('/api/auth/register', { email, password: TEST_PASSWORD });
    expect(registered.status).toBe(201);
    const token = registered.body.accessToken as string;
    await http.post('/api/auth/accept-terms', {}, { token });
    // The demo site is trusted and reachable as started: its manifest is fetched over HTTPS.
    const demoSite = await http.post('/api/vault/sites', { url: `https://localhost:${demoPort}` }, { token });
    expect(demoSite.status).toBe(201);
    expect(demoSite.body.name).toBe('Reference Notebook');
    // The payload key npm start generated once and keeps under DATA_DIR, as the API and worker read it.
    const payloadKey = readFileSync(path.join(dataDir, 'temporal-codec-key'), 'utf8').trim();
    const { client, connection } = await temporalClient({ address: `127.0.0.1:${temporalPort}`, key: payloadKey });
    // The dev server's namespace keeps closed workflows RUN_HISTORY_RETENTION_DAYS (its own default is 1 day).
    const namespace = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(Number(namespace.config?.workflowExecutionRetentionTtl?.seconds)).toBe(3 * 86_400);
    const workflowId = `persisted-${Date.now()}`;
    const result = await client.workflow.execute('echoWorkflow', {
      taskQueue: 'agentsite',
      workflowId,
      args: [{ message: 'kept' }],
    });
    expect(result.message).toBe('kept');
    await connection.close();

    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('[start] stopped');
    for (const port of [apiPort, pgPort, temporalPort, uiPort]) {
      expect(await portOpen(port)).toBe(false);
    }

    const second = await start(env);
    running.push(second.child);
    expect(second.output()).toContain('database schema is up to date');
    // The same password across restarts.
    expect(readFileSync(passwordFile, 'utf8').trim()).toBe(pgPassword);
    expect(await acceptsPassword(pgPort, pgPassword)).toBe(true);
    expect(second.output()).not.toContain(pgPassword);
    expect((await http.post('/api/auth/login', { email, password: TEST_PASSWORD })).status).toBe(200);
    const again = await temporalClient({ address: `127.0.0.1:${temporalPort}`, key: payloadKey });
    expect(await again.client.workflow.getHandle(workflowId).result()).toMatchObject({ message: 'kept' });
    await again.connection.close();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 240_000);

  it('refuses the test payment provider on a HOST beyond loopback, before starting anything', async () => {
    const [apiPort, pgPort] = await Promise.all([freePort(), freePort()]);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'agentsite-host-'));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(apiPort),
      EMBEDDED_POSTGRES_PORT: String(pgPort),
      DEMO_SITE_PORT: '0',
      TEMPORAL_CLI_PATH: testEnv('temporalCli'),
    };
    const run = (extra: NodeJS.ProcessEnv) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [startScript], {
          env: { ...env, ...extra },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        running.push(child);
        let output = '';
        child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.on('exit', (code) => resolve({ code, output }));
      });
    // PAYMENT_PROVIDER unset: npm start's default, the test provider, on every interface.
    for (const extra of [{ HOST: '0.0.0.0' }, { HOST: '::', PAYMENT_PROVIDER: 'test', ALLOW_TEST_PAYMENTS: 'true' }]) {
      const refused = await run(extra);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(
        `PAYMENT_PROVIDER=test grants credits and tiers for free and HOST=${extra.HOST}`,
      );
      expect(refused.output).toContain('ALLOW_TEST_PAYMENTS_ON_NETWORK=true');
      expect(refused.output).not.toContain('starting embedded PostgreSQL');
    }
    expect(await portOpen(pgPort)).toBe(false);
    expect(await portOpen(apiPort)).toBe(false);
  }, 120_000);

  it('reads .env from the directory it runs in, the environment winning over it, and says which file it read', async () => {
    const [apiPort, pgPort] = await Promise.all([freePort(), freePort()]);
    const project = mkdtempSync(path.join(tmpdir(), 'agentsite-dotenv-'));
    // A setting given only in .env: a HOST beyond loopback, which the test payment provider refuses at once.
    writeFileSync(
      path.join(project, '.env'),
      `# as in .env.example\nHOST=0.0.0.0\nDATA_DIR=${path.join(project, 'data')}\nPORT=${apiPort}\nEMBEDDED_POSTGRES_PORT=${pgPort}\n`,
    );
    const run = (extra: NodeJS.ProcessEnv) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [startScript], {
          cwd: project,
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            DEMO_SITE_PORT: '0',
            TEMPORAL_CLI_PATH: testEnv('temporalCli'),
            ...extra,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        running.push(child);
        let output = '';
        child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.on('exit', (code) => resolve({ code, output }));
      });
    const fromFile = await run({});
    expect(fromFile.output).toContain(
      `[start] settings read from ${path.join(project, '.env')} (the environment wins over it)`,
    );
    expect(fromFile.code).toBe(1);
    expect(fromFile.output).toContain('PAYMENT_PROVIDER=test grants credits and tiers for free and HOST=0.0.0.0 ');
    // The environment wins over the file.
    const fromEnvironment = await run({ HOST: '::' });
    expect(fromEnvironment.code).toBe(1);
    expect(fromEnvironment.output).toContain('PAYMENT_PROVIDER=test grants credits and tiers for free and HOST=:: ');
    expect(await portOpen(pgPort)).toBe(false);
    expect(await portOpen(apiPort)).toBe(false);
  }, 120_000);

  it('embedded PostgreSQL: a data dir of the fixed password `postgres` gets a generated one at its next start, kept after', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentsite-pg-password-'));
    const port = await freePort();
    const passwordFile = path.join(dir, 'postgres-password');
    const options = { dir: path.join(dir, 'postgres'), port, fast: true, passwordFile };
    // A data dir as an earlier npm start left it: the server user's password is `postgres`, no file.
    let server = await startEmbeddedPostgres(options);
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("ALTER ROLE postgres PASSWORD 'postgres'");
    await admin.query('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    await admin.end();
    await server.stop();
    rmSync(passwordFile, { force: true });

    const logged: string[] = [];
    server = await startEmbeddedPostgres({ ...options, log: (line) => logged.push(line) });
    try {
      const password = readFileSync(passwordFile, 'utf8').trim();
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
      expect(await acceptsPassword(port, 'postgres')).toBe(false);
      expect(await acceptsPassword(port, password)).toBe(true);
      expect(logged.join('\n')).not.toContain(password);
      // The URL the processes get has it; the data is the data dir's.
      expect(server.url).toContain(`postgres:${password}@127.0.0.1:${port}/agentsite`);
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      expect((await client.query('SELECT n FROM kept')).rows).toEqual([{ n: 7 }]);
      await client.end();
    } finally {
      await server.stop();
    }
    // Kept across restarts.
    const before = readFileSync(passwordFile, 'utf8');
    server = await startEmbeddedPostgres(options);
    try {
      expect(readFileSync(passwordFile, 'utf8')).toBe(before);
      expect(await acceptsPassword(port, before.trim())).toBe(true);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('keeps itself up: the worker, the API, then the Temporal dev server SIGKILLed mid-run each come back, and the run completes', async () => {
    const model = await FakeModel.start();
    const [apiPort, temporalPort, uiPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'agentsite-supervised-')),
      PORT: String(apiPort),
      // The suites' PostgreSQL (spares an embedded server's start); Temporal is npm start's own dev server.
      DATABASE_URL: testEnv('databaseUrl'),
      TEMPORAL_DEV_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      DEMO_SITE_PORT: '0',
      TEMPORAL_CLI_PATH: testEnv('temporalCli'),
      JWT_SECRET: TEST_JWT_SECRET,
      VAULT_KEY: TEST_VAULT_KEY,
      PASSWORD_SCRYPT_N: '16384',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
    };
    const http = new Http(`http://127.0.0.1:${apiPort}`);
    const started = await start(env);
    running.push(started.child);
    /** The pid the supervisor last reported for a child (it logs one line per start). */
    const pidOf = (name: string): number => {
      const pids = [...started.output().matchAll(new RegExp(`\\[start\\] ${name} running \\(pid (\\d+)\\)`, 'g'))];
      return Number(pids[pids.length - 1]![1]);
    };
    const restartedAfter = (name: string, oldPid: number): Promise<number> =>
      eventually(`${name} restarted`, async () => (pidOf(name) !== oldPid ? pidOf(name) : undefined), 60_000);
    try {
      const admin = await registerAdmin(http, { env });
      const user = await registerUser(http);
      await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 100_000 }, { token: admin.token });
      const agent = await http.post(
        '/api/agents',
        {
          name: 'supervised',
          systemPrompt: 'p',
          siteIds: [],
          trigger: { type: 'webhook', schema: [{ name: 'n', type: 'integer' }] },
        },
        { token: user.token },
      );
      expect(agent.status).toBe(201);
      // Every model answer waits, so the run is mid-turn when the worker dies.
      model.fallback = { text: 'survived the kills', delayMs: 1_500 };
      const accepted = await http.post(
        `/api/webhooks/agent/${agent.body.id}`,
        { n: 1 },
        { headers: { 'x-webhook-secret': agent.body.webhookSecret } },
      );
      expect(accepted.status).toBe(202);
      await eventually('the run to call the model', async () => (model.requests.length > 0 ? true : undefined));

      const api = pidOf('api');
      const worker = pidOf('worker');
      process.kill(worker, 'SIGKILL');
      const newWorker = await restartedAfter('worker', worker);
      expect(started.output()).toContain('[start] worker exited (SIGKILL); restarting it in 500 ms');
      // The API kept serving meanwhile: same process, healthy.
      expect(pidOf('api')).toBe(api);
      expect((await http.get('/api/health')).status).toBe(200);

      process.kill(api, 'SIGKILL');
      await restartedAfter('api', api);
      expect(started.output()).toContain('[start] api exited (SIGKILL); restarting it in 500 ms');
      const health = await eventually('/api/health to answer 200 again', async () => {
        const res = await http.get('/api/health').catch(() => undefined);
        return res?.status === 200 ? res : undefined;
      });
      expect(health.body).toMatchObject({ status: 'ok', database: { status: 'up' }, temporal: { status: 'up' } });
      expect(pidOf('worker')).toBe(newWorker);

      // The dev server too: its state is in its SQLite file, and the API and worker reconnect to it.
      const temporal = pidOf('temporal');
      process.kill(temporal, 'SIGKILL');
      await restartedAfter('temporal', temporal);
      expect(started.output()).toContain('[start] temporal exited (SIGKILL); restarting it in 500 ms');
      await eventually('/api/health to see Temporal again', async () => {
        const res = await http.get('/api/health').catch(() => undefined);
        return res?.status === 200 && res.body.temporal?.status === 'up' ? true : undefined;
      });

      // The model turn lost with the worker is retried on the new one (after its heartbeat timeout).
      const run = await waitForRun(http, user.token, accepted.body.runId as string, undefined, 150_000);
      expect(run.status).toBe('completed');
      expect(run.timeline[run.timeline.length - 1]).toMatchObject({ type: 'completed', output: 'survived the kills' });
      expect(started.output()).not.toContain('stopping everything');

      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
      expect(started.output()).toContain('[start] stopped');
      for (const pid of [pidOf('api'), pidOf('worker'), pidOf('temporal')]) {
        expect(() => process.kill(pid, 0)).toThrow();
      }
    } finally {
      await model.stop();
    }
  }, 300_000);
});
