import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, stopChild } from '../../scripts/runtime/processes.js';
import { expectError, expectRateLimited, Http } from '../utils/http.js';
import { Stack } from '../utils/stack.js';
import { registerUser } from '../utils/users.js';
import { temporalClient } from '../utils/temporal.js';

describe('error model, health, OpenAPI and the worker (e2e)', () => {
  let stack: Stack;
  let http: Http;
  let token: string;

  beforeAll(async () => {
    stack = await Stack.start();
    http = new Http(stack.baseUrl);
    token = (await registerUser(http)).token;
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('answers NOT_FOUND for unknown routes and methods, with a correlation id', async () => {
    const res = await http.get('/api/no/such/route', { token });
    expectError(res, 'NOT_FOUND', 404);
    expect(res.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
    expectError(await http.request('PUT', '/api/me', { token }), 'NOT_FOUND', 404);
    expectError(await http.get('/nothing-outside-the-api'), 'NOT_FOUND', 404);
    const echoed = await http.get('/api/nope', { headers: { 'x-correlation-id': 'client-chosen-id-42' } });
    expect(echoed.headers.get('x-correlation-id')).toBe('client-chosen-id-42');
  });

  it('answers VALIDATION_ERROR for malformed JSON, non-object bodies, wrong types, unknown fields and huge bodies', async () => {
    const malformed = await http.request('POST', '/api/auth/login', {
      rawBody: '{"email": "a@b.c", "password": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 'VALIDATION_ERROR', 400);
    expect(malformed.body.details).toEqual([{ field: 'body', message: 'Request body is not valid JSON' }]);

    for (const raw of ['[]', '"text"', '42', 'null']) {
      const res = await http.request('POST', '/api/auth/login', {
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 'VALIDATION_ERROR', 400);
    }

    const wrongTypes = await http.post('/api/auth/register', { email: 5, password: ['x'], name: {}, extra: true });
    expectError(wrongTypes, 'VALIDATION_ERROR', 400);
    const fields = new Set(wrongTypes.body.details.map((d: { field: string }) => d.field));
    expect([...fields].sort()).toEqual(['email', 'extra', 'name', 'password']);

    const textBody = await http.request('POST', '/api/auth/login', {
      rawBody: 'email=a',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(textBody, 'VALIDATION_ERROR', 400);

    const huge = await http.request('POST', '/api/auth/login', {
      rawBody: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(huge, 'VALIDATION_ERROR', 400);
    expect(huge.text).not.toMatch(/at .*\.js:\d+/);
  });

  it('reports the database and Temporal up, with a polling worker', async () => {
    const res = await http.get('/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      database: { status: 'up' },
      temporal: { status: 'up', namespace: 'default' },
    });
    expect(res.body.temporal.workerPollers).toBeGreaterThanOrEqual(1);
  });

  it('reports Temporal down (503, degraded) when the API cannot reach it, and still answers', async () => {
    const closedPort = await freePort();
    const degraded = await Stack.start({
      worker: false,
      anyHealth: true,
      env: { TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` },
    });
    try {
      const res = await new Http(degraded.baseUrl).get('/api/health');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'degraded', database: { status: 'up' }, temporal: { status: 'down' } });
      expect(res.body.code).toBeUndefined();
      // The rest of the API works without Temporal.
      expect((await new Http(degraded.baseUrl).get('/api/me', { token })).status).toBe(200);
    } finally {
      await degraded.stop();
    }
  });

  it('serves the OpenAPI document generated from the code, and its page', async () => {
    const doc = await http.get('/api/docs/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    for (const path of [
      '/api/auth/register',
      '/api/auth/login',
      '/api/auth/logout',
      '/api/auth/logout-all',
      '/api/auth/accept-terms',
      '/api/me',
      '/api/health',
      '/api/admin/users',
      '/api/admin/users/{id}',
      '/api/billing',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(path);
    }
    expect(doc.body.components.schemas.RegisterDto.required).toEqual(expect.arrayContaining(['email', 'password']));
    const page = await http.get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger');
  });

  it('the worker runs workflows and activities on the stack task queue, and stops cleanly on SIGTERM', async () => {
    const { client, connection } = await temporalClient();
    try {
      const result = await client.workflow.execute('echoWorkflow', {
        taskQueue: stack.env.TEMPORAL_TASK_QUEUE!,
        workflowId: `echo-${Date.now()}`,
        args: [{ message: 'hello' }],
        workflowExecutionTimeout: '30 seconds',
      });
      expect(result).toEqual({ message: 'hello', handledBy: expect.stringContaining(`${stack.worker!.child.pid}@`) });
    } finally {
      await connection.close();
    }
    const worker = stack.worker!.child;
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    await stopChild(worker);
    expect(await exited).toBe(0);
  });
});

describe('RATE_LIMITED (e2e)', () => {
  it('limits per address across two API processes sharing PostgreSQL, with Retry-After', async () => {
    const env = { RATE_LIMIT_PER_IP: '6', RATE_LIMIT_WINDOW_SECONDS: '30' };
    const a = await Stack.start({ worker: false, env });
    const b = await Stack.start({ worker: false, env });
    try {
      // Health polling during start-up spent some points already; spend the rest alternating processes.
      const answers = [];
      for (let i = 0; i < 8; i += 1) {
        answers.push(await new Http((i % 2 === 0 ? a : b).baseUrl).get('/api/me'));
      }
      const limited = answers.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      for (const res of limited) {
        expectError(res, 'RATE_LIMITED', 429);
        const retryAfter = Number(res.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(30);
      }
      // Both processes refuse: the counter is shared, not per process.
      expectError(await new Http(a.baseUrl).get('/api/me'), 'RATE_LIMITED', 429);
      expectError(await new Http(b.baseUrl).get('/api/me'), 'RATE_LIMITED', 429);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('counts GET /api/health against the per-address limit; the liveness and readiness probes are not counted', async () => {
    const stack = await Stack.start({
      worker: false,
      env: { RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW_SECONDS: '37' },
    });
    try {
      const http = new Http(stack.baseUrl);
      // Starting the stack polled only the readiness probe: the address has its three points. No worker:
      // PostgreSQL and Temporal are up (200), the readiness probe says no worker polls (503).
      const answers = [];
      for (let i = 0; i < 4; i += 1) {
        answers.push(await http.get('/api/health'));
      }
      expect(answers.slice(0, 3).map((a) => a.status)).toEqual([200, 200, 200]);
      expectRateLimited(answers[3]!, 37);
      expect((await http.get('/api/health/live')).status).toBe(200);
      expect((await http.get('/api/health/ready')).status).toBe(503);
    } finally {
      await stack.stop();
    }
  });

  it('limits per user, whatever the address', async () => {
    const stack = await Stack.start({
      worker: false,
      env: { RATE_LIMIT_PER_USER: '3', RATE_LIMIT_WINDOW_SECONDS: '30' },
    });
    try {
      const http = new Http(stack.baseUrl);
      const user = await registerUser(http, { acceptTerms: false });
      const other = await registerUser(http, { acceptTerms: false });
      const codes = [];
      for (let i = 0; i < 4; i += 1) {
        codes.push((await http.get('/api/me', { token: user.token })).status);
      }
      expect(codes).toEqual([200, 200, 200, 429]);
      expect((await http.get('/api/me', { token: other.token })).status).toBe(200);
    } finally {
      await stack.stop();
    }
  });
});
