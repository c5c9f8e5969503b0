import { afterEach, describe, expect, it } from '@jest/globals';
import type { NotReadyReason } from './readiness.service.js';
import { PROMETHEUS_TEXT, startWorkerHttpServer, type WorkerHttpServer } from './worker-http-server.js';

const TOKEN = 'a-scraper-token-of-32-characters-or-more';

describe("the worker's HTTP server (health and metrics)", () => {
  let server: WorkerHttpServer | undefined;
  let reasons: NotReadyReason[] = [];

  async function start(metricsToken: string | undefined = TOKEN): Promise<string> {
    server = await startWorkerHttpServer({
      port: 0,
      host: '127.0.0.1',
      metricsToken,
      notReady: () => Promise.resolve(reasons),
      metrics: () => Promise.resolve('agentsite_runs_started_total{trigger="manual"} 2\n'),
    });
    return `http://127.0.0.1:${server.port}`;
  }

  afterEach(async () => {
    await server?.close();
    server = undefined;
    reasons = [];
  });

  it('answers live always, and ready 200 or 503 with the reasons', async () => {
    const base = await start();
    const live = await fetch(`${base}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/health/ready`)).json()).toEqual({ status: 'ready', reasons: [] });
    reasons = ['database unavailable', 'this worker does not poll the task queue'];
    const notReady = await fetch(`${base}/health/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'not_ready', reasons });
  });

  it('serves the metrics only with Authorization: Bearer METRICS_TOKEN', async () => {
    const base = await start();
    const url = `${base}/metrics`;
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await fetch(url, { headers: authorization === undefined ? {} : { authorization } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', statusCode: 401 });
    }
    const ok = await fetch(url, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
    expect(await ok.text()).toBe('agentsite_runs_started_total{trigger="manual"} 2\n');
  });

  it('serves no metrics at all without METRICS_TOKEN, and 404 for anything else', async () => {
    const base = await start(undefined);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer undefined' } })).status).toBe(401);
    const missing = await fetch(`${base}/api/health`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND', statusCode: 404 });
    expect((await fetch(`${base}/health/live`, { method: 'POST' })).status).toBe(404);
  });
});
