import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { freePort, portOpen, waitFor } from '../../scripts/runtime/processes.js';
import { testEnv } from '../setup/shared-runtime.js';
import { Http } from '../utils/http.js';
import { TEST_PASSWORD, uniqueEmail } from '../utils/users.js';

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
    expect(first.output()).toContain(`[start] API         http://localhost:${apiPort}/api`);
    expect(first.output()).toContain(`[start] OpenAPI     http://localhost:${apiPort}/api/docs`);
    expect(first.output()).toContain(`[start] Temporal UI http://localhost:${uiPort}`);
    const health = await http.get('/api/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', database: { status: 'up' }, temporal: { status: 'up' } });
    const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(ui.status).toBe(200);

    expect(first.output()).toContain(`[start] Demo site   https://localhost:${demoPort}`);
    const email = uniqueEmail();
    const registered = await http.post('/api/auth/register', { email, password: TEST_PASSWORD });
    expect(registered.status).toBe(201);
    const token = registered.body.accessToken as string;
    await http.post('/api/auth/accept-terms', {}, { token });
    // The demo site is trusted and reachable as started: its manifest is fetched over HTTPS.
    const demoSite = await http.post('/api/vault/sites', { url: `https://localhost:${demoPort}` }, { token });
    expect(demoSite.status).toBe(201);
    expect(demoSite.body.name).toBe('Reference Notebook');
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    // The dev server's namespace keeps closed workflows RUN_HISTORY_RETENTION_DAYS (its own default is 1 day).
    const namespace = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(Number(namespace.config?.workflowExecutionRetentionTtl?.seconds)).toBe(3 * 86_400);
    const workflowId = `persisted-${Date.now()}`;
    const result = await new Client({ connection }).workflow.execute('echoWorkflow', {
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
    expect((await http.post('/api/auth/login', { email, password: TEST_PASSWORD })).status).toBe(200);
    const again = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    const described = await new Client({ connection: again }).workflow.getHandle(workflowId).describe();
    expect(described.status.name).toBe('COMPLETED');
    await again.close();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
