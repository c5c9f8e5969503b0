import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import middie from '@fastify/middie';
import fastify from 'fastify';
import { noteRoute } from '../common/access-log.js';
import { AppError } from '../common/app-error.js';
import { writeAppError } from '../common/error-filter.js';
import { httpMetricsMiddleware, NO_ROUTE } from './http-metrics.middleware.js';
import { MetricsService } from './metrics.service.js';

/** A small Fastify app shaped like the API: the middleware first (middie), then routes with templates. */
describe('httpMetricsMiddleware: route templates and webhook deliveries', () => {
  const metrics = new MetricsService();
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    const app = fastify();
    await app.register(middie);
    app.use(httpMetricsMiddleware(metrics));
    app.addHook('preValidation', noteRoute);
    app.get('/api/agents/:id', async () => ({ ok: true }));
    app.post('/api/webhooks/agent/:agentId', (req, reply) => {
      if (req.headers['x-webhook-secret'] === 'right') {
        void reply.code(202).send({ status: 'queued' });
      } else {
        writeAppError(reply, new AppError('WEBHOOK_SECRET_INVALID', 'no'));
      }
    });
    app.setNotFoundHandler((_req, reply) => {
      writeAppError(reply, new AppError('NOT_FOUND', 'no route'));
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => void app.close();
  });

  afterAll(() => close());

  const count = async (labels: Record<string, string>): Promise<number> => {
    const metric = await metrics.httpDuration.get();
    const found = metric.values.find(
      (v) =>
        v.metricName === 'agentsite_http_request_duration_seconds_count' &&
        Object.entries(labels).every(([k, val]) => (v.labels as Record<string, unknown>)[k] === val),
    );
    return found?.value ?? 0;
  };

  it('labels requests by the route template, never by the raw path, and unrouted ones as (none)', async () => {
    await fetch(`${base}/api/agents/0b5e7a3c-0000-4000-8000-000000000001`);
    await fetch(`${base}/api/agents/0b5e7a3c-0000-4000-8000-000000000002`);
    await fetch(`${base}/nowhere/at/all`);
    expect(await count({ method: 'GET', route: '/api/agents/:id', status: '200' })).toBe(2);
    expect(await count({ method: 'GET', route: NO_ROUTE, status: '404' })).toBe(1);
    const text = await metrics.render();
    expect(text).not.toContain('0b5e7a3c');
    expect(text).not.toContain('nowhere');
  });

  it('counts webhook deliveries: accepted, and refused with the answer’s error code', async () => {
    const post = (secret: string) =>
      fetch(`${base}/api/webhooks/agent/a1`, { method: 'POST', headers: { 'x-webhook-secret': secret } });
    await post('right');
    await post('wrong');
    await post('wrong');
    const deliveries = await metrics.webhookDeliveries.get();
    const value = (outcome: string, code: string) =>
      deliveries.values.find((v) => v.labels.outcome === outcome && v.labels.code === code)?.value;
    expect(value('accepted', 'none')).toBe(1);
    expect(value('refused', 'WEBHOOK_SECRET_INVALID')).toBe(2);
  });
});
