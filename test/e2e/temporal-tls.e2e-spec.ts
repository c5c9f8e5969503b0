import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestCa, issueServerCert, type TestCa } from '../../examples/site/tls.js';
import { FakeModel } from '../fixtures/fake-model.js';
import { issueClientCert, TemporalTlsProxy } from '../fixtures/temporal-tls-proxy.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerAdmin } from '../utils/admin.js';
import { Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { Stack } from '../utils/stack.js';
import { registerUser } from '../utils/users.js';

const API_KEY = 'cloud-key-for-the-tls-suite-7f3a';
/** The proxy's certificate carries only this name: the mTLS stacks must check it via TEMPORAL_TLS_SERVER_NAME. */
const SERVER_NAME = 'frontend.temporal.test';

/**
 * The API's client and the worker reach Temporal through a TLS endpoint that demands a client
 * certificate, and through one that demands an API key (the dev server behind a gRPC TLS proxy);
 * wrong credentials stop the worker with a message that says what is wrong.
 */
/**
 * A refused handshake is retried by gRPC until the connection's timeout: the failing workers wait 2 s
 * for it instead of the default 10 (each still reports why, from the probe after the timeout).
 */
const SHORT_CONNECT = { TEMPORAL_CONNECT_TIMEOUT_SECONDS: '2' };

describe('connecting to a secured Temporal (mTLS, API key) (e2e)', () => {
  let dir: string;
  let serverCa: TestCa;
  let mtlsProxy: TemporalTlsProxy;
  let keyProxy: TemporalTlsProxy;
  let model: FakeModel;
  const files: Record<string, string> = {};

  beforeAll(async () => {
    dir = path.join(testEnv('workDir'), `temporal-tls-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    serverCa = await createTestCa('temporal server test CA');
    const clientCa = await createTestCa('temporal client test CA');
    const rogueCa = await createTestCa('a CA the server does not know');
    const client = await issueClientCert(clientCa, 'agentsite-worker');
    const rogue = await issueClientCert(rogueCa, 'intruder');
    for (const [name, contents] of Object.entries({
      'server-ca.pem': serverCa.cert,
      'client.pem': client.cert,
      'client.key': client.key,
      'rogue.pem': rogue.cert,
      'rogue.key': rogue.key,
    })) {
      files[name] = path.join(dir, name);
      writeFileSync(files[name], contents, { mode: 0o600 });
    }
    const upstream = testEnv('temporalAddress');
    mtlsProxy = await TemporalTlsProxy.start({
      upstream,
      serverCert: await issueServerCert(serverCa, [SERVER_NAME]),
      mode: { type: 'mtls', clientCa: clientCa.cert },
    });
    keyProxy = await TemporalTlsProxy.start({
      upstream,
      serverCert: await issueServerCert(serverCa, ['localhost', '127.0.0.1']),
      mode: { type: 'api-key', apiKey: API_KEY },
    });
    model = await FakeModel.start();
  });

  afterAll(async () => {
    await Promise.all([mtlsProxy?.stop(), keyProxy?.stop(), model?.stop()]);
  });

  const mtlsEnv = (cert: string, key: string): Record<string, string> => ({
    TEMPORAL_ADDRESS: mtlsProxy.address,
    TEMPORAL_TLS_CERT: files[cert]!,
    TEMPORAL_TLS_KEY: files[key]!,
    TEMPORAL_TLS_CA: files['server-ca.pem']!,
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
  });
  const keyEnv = (apiKey: string): Record<string, string> => ({
    TEMPORAL_ADDRESS: keyProxy.address,
    TEMPORAL_API_KEY: apiKey,
    // The Cloud would present a publicly trusted certificate; the proxy's comes from the test CA.
    TEMPORAL_TLS_CA: files['server-ca.pem']!,
  });

  /** A webhook run on the stack, through whatever stands between it and Temporal, to its end. */
  async function completeAWebhookRun(stack: Stack): Promise<void> {
    const http = new Http(stack.baseUrl);
    const admin = await registerAdmin(http, stack);
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 10_000 }, { token: admin.token });
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Secured triage',
        systemPrompt: 'Triage.',
        siteIds: [],
        trigger: { type: 'webhook', schema: [{ name: 'ticket', type: 'string', required: true }] },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    model.script({ text: 'Triaged over TLS.' });
    const accepted = await http.post(
      `/api/webhooks/agent/${agent.body.id}`,
      { ticket: 'TLS ticket' },
      { headers: { 'x-webhook-secret': agent.body.webhookSecret } },
    );
    expect(accepted.status).toBe(202);
    const run = await waitForRun(http, user.token, accepted.body.runId);
    expect(run).toMatchObject({ status: 'completed', triggeredBy: 'webhook', payload: { ticket: 'TLS ticket' } });
  }

  function modelEnv(): Record<string, string> {
    return { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: model.url };
  }

  /** Starts an entry point of the stack (with extra settings) and waits for it to give up: its exit code and output. */
  async function failingProcess(
    stack: Stack,
    extraEnv: Record<string, string> = {},
    entry = 'src/worker.js',
  ): Promise<{ code: number | null; output: string }> {
    const { child } = stack.spawn(path.basename(entry, '.js'), entry, extraEnv);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close': the process has exited and its output has been read to the end.
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, output };
  }

  it('mTLS: the API and the worker present the client certificate, check the server by TEMPORAL_TLS_SERVER_NAME, and a run completes', async () => {
    const stack = await Stack.start({ env: { ...mtlsEnv('client.pem', 'client.key'), ...modelEnv() } });
    try {
      await completeAWebhookRun(stack);
      // Every call went through the TLS endpoint: the worker's polls and the API's start of the run.
      expect(mtlsProxy.calls('PollWorkflowTaskQueue')).toBeGreaterThan(0);
      expect(mtlsProxy.calls('PollActivityTaskQueue')).toBeGreaterThan(0);
      expect(
        mtlsProxy.calls('ExecuteMultiOperation') + mtlsProxy.calls('SignalWithStartWorkflowExecution'),
      ).toBeGreaterThan(0);
      expect([...mtlsProxy.clientNames]).toEqual(['agentsite-worker']);
      expect(stack.logs()).toContain(`on ${mtlsProxy.address} (mTLS)`);
    } finally {
      await stack.stop();
    }
  });

  it('API key: sent as a bearer token by the API and the worker, over TLS; a run completes even though the operator service is refused, as on Temporal Cloud', async () => {
    const refusedBefore = keyProxy.refused.length;
    const stack = await Stack.start({ env: { ...keyEnv(API_KEY), ...modelEnv() } });
    try {
      await completeAWebhookRun(stack);
      expect(keyProxy.calls('PollWorkflowTaskQueue')).toBeGreaterThan(0);
      expect(
        keyProxy.calls('ExecuteMultiOperation') + keyProxy.calls('SignalWithStartWorkflowExecution'),
      ).toBeGreaterThan(0);
      // The only calls the proxy turned away were the operator service's (as the Cloud does), never for a missing key.
      const refused = keyProxy.refused.slice(refusedBefore);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((call) => call.path.includes('OperatorService') && call.status === 7)).toBe(true);
      const logs = stack.logs();
      expect(logs).toContain(`on ${keyProxy.address} (TLS, API key)`);
      expect(logs).toContain("cannot list the namespace's search attributes");
      expect(logs).not.toContain(API_KEY);
    } finally {
      await stack.stop();
    }
  });

  it('a wrong API key: the worker exits naming TEMPORAL_API_KEY, the API stays up and reports Temporal down', async () => {
    const wrongKey = 'not-the-cloud-key-4242';
    const stack = await Stack.start({ worker: false, anyHealth: true, env: keyEnv(wrongKey) });
    try {
      const { code, output } = await failingProcess(stack);
      expect(code).toBe(1);
      expect(output).toContain(
        `cannot connect to Temporal at ${keyProxy.address} (TLS, API key): the server refused the API key: check TEMPORAL_API_KEY`,
      );
      expect(output).not.toContain('worker failed:'); // a message, not a stack trace
      expect(output).not.toContain(wrongKey);
      const health = await new Http(stack.baseUrl).get('/api/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({
        status: 'degraded',
        database: { status: 'up' },
        temporal: { status: 'down' },
      });
      expect(stack.api.child.exitCode).toBeNull();
      expect(stack.logs()).not.toContain(wrongKey);
    } finally {
      await stack.stop();
    }
  });

  it('a client certificate from a CA the server does not trust: the worker exits saying the certificate was not accepted; health reports Temporal down', async () => {
    const failuresBefore = mtlsProxy.handshakeFailures;
    const stack = await Stack.start({
      worker: false,
      anyHealth: true,
      env: { ...mtlsEnv('rogue.pem', 'rogue.key'), ...SHORT_CONNECT },
    });
    try {
      const { code, output } = await failingProcess(stack);
      expect(code).toBe(1);
      expect(output).toContain(`cannot connect to Temporal at ${mtlsProxy.address} (mTLS):`);
      expect(output).toMatch(/did not accept the client certificate \(TEMPORAL_TLS_CERT/);
      expect(mtlsProxy.handshakeFailures).toBeGreaterThan(failuresBefore);
      const health = await new Http(stack.baseUrl).get('/api/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'degraded', temporal: { status: 'down' } });
      expect(stack.api.child.exitCode).toBeNull();
    } finally {
      await stack.stop();
    }
  });

  it('no client certificate where one is demanded, or a server certificate not trusted: the worker says which', async () => {
    const stack = await Stack.start({
      worker: false,
      anyHealth: true,
      env: {
        TEMPORAL_ADDRESS: mtlsProxy.address,
        TEMPORAL_TLS_CA: files['server-ca.pem']!,
        TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
        ...SHORT_CONNECT,
      },
    });
    try {
      const { code, output } = await failingProcess(stack);
      expect(code).toBe(1);
      expect(output).toContain(
        `cannot connect to Temporal at ${mtlsProxy.address} (TLS): the server demands a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY`,
      );
      // Same endpoint, the right client certificate, but without the CA that issued the server's.
      const untrusted = await failingProcess(stack, { ...mtlsEnv('client.pem', 'client.key'), TEMPORAL_TLS_CA: '' });
      expect(untrusted.code).toBe(1);
      expect(untrusted.output).toMatch(/the server's certificate is not trusted \(.*\): set TEMPORAL_TLS_CA/);
    } finally {
      await stack.stop();
    }
  });

  it('settings that cannot work stop the API and the worker at start, naming the variable', async () => {
    const stack = await Stack.start({ worker: false, anyHealth: true });
    try {
      const worker = await failingProcess(stack, {
        TEMPORAL_ADDRESS: mtlsProxy.address,
        TEMPORAL_TLS_CERT: files['client.pem']!,
      });
      expect(worker.code).toBe(1);
      expect(worker.output).toContain('TEMPORAL_TLS_CERT is set without TEMPORAL_TLS_KEY');
      const api = await failingProcess(
        stack,
        {
          TEMPORAL_ADDRESS: mtlsProxy.address,
          TEMPORAL_TLS_CERT: files['client.pem']!,
          TEMPORAL_TLS_KEY: path.join(dir, 'missing.key'),
        },
        'src/main.js',
      );
      expect(api.code).toBe(1);
      expect(api.output).toContain('TEMPORAL_TLS_KEY names a file that cannot be read (ENOENT)');
    } finally {
      await stack.stop();
    }
  });
});
