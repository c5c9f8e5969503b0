import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { testEnv } from '../setup/shared-runtime.js';
import { Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { Stack } from '../utils/stack.js';
import { registerUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** What a driver's or runtime's error text looks like: none of it may reach a public answer or a timeline. */
const RAW_ERROR = /ECONNREFUSED|UNAVAILABLE|\d+\.\d+\.\d+\.\d+|localhost:\d+|TypeError|is not iterable|\bat .+\.js:\d+/;

describe('public answers carry generic messages; the details are in the logs (e2e)', () => {
  it('health with a Temporal error: "temporal unavailable", and the log has the error with the correlation id', async () => {
    // A namespace the server does not have: Temporal answers at once, with its own error text.
    const namespace = `missing-${randomUUID().slice(0, 8)}`;
    const stack = await Stack.start({ worker: false, anyHealth: true, env: { TEMPORAL_NAMESPACE: namespace } });
    try {
      const correlationId = `health-${randomUUID()}`;
      const health = await new Http(stack.baseUrl).get('/api/health', {
        headers: { 'x-correlation-id': correlationId },
      });
      expect(health.status).toBe(503);
      expect(health.body.temporal).toMatchObject({ status: 'down', error: 'temporal unavailable' });
      expect(health.body.database.status).toBe('up');
      expect(health.text).not.toMatch(RAW_ERROR);
      expect(health.text).not.toMatch(/not found|NOT_FOUND/i);
      // The log line is written as the answer goes out: wait for it rather than race the file.
      const line = await eventually(
        'the health log line',
        async () =>
          stack
            .logs()
            .split('\n')
            .find((l) => l.includes(correlationId)),
        10_000,
      );
      expect(line).toMatch(/Temporal is down: .*not found/i);
    } finally {
      await stack.stop();
    }
  });

  describe('a run whose activity fails unexpectedly', () => {
    let world: World;

    beforeAll(async () => {
      world = await startWorld();
    });

    afterAll(async () => {
      await world?.stop();
    });

    it('shows a generic message with a reference in its timeline; the worker log has the error', async () => {
      const { http, admin, model } = world;
      const user = await registerUser(http);
      await http.patch(`/api/admin/users/${user.id}`, { tier: 'pro', credits: 10_000 }, { token: admin.token });
      const siteId = (await http.post('/api/vault/sites', { url: world.site.url }, { token: user.token })).body.id;
      const agent = (
        await http.post(
          '/api/agents',
          { name: 'broken', systemPrompt: 'p', siteIds: [siteId], trigger: { type: 'manual' } },
          { token: user.token },
        )
      ).body as { id: string };
      // A stored manifest that the run's start cannot read: a TypeError inside the activity (a bug's
      // stand-in), retried, then the end of the run.
      const db = new pg.Client({ connectionString: testEnv('databaseUrl') });
      await db.connect();
      try {
        await db.query(`UPDATE sites SET manifest = jsonb_set(manifest, '{tools}', '5') WHERE id = $1`, [siteId]);
      } finally {
        await db.end();
      }
      const calls = model.requests.length;
      const started = await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token });
      expect(started.status).toBe(201);
      const run = await waitForRun(http, user.token, started.body.id, undefined, 80_000);

      expect(run.status).toBe('failed');
      const failed = run.timeline[run.timeline.length - 1]!;
      expect(failed).toMatchObject({ type: 'failed', code: 'INTERNAL_ERROR' });
      expect(failed.error).toContain(`workflow agent-${agent.id}, run ${run.temporal.runId}`);
      expect(failed.error).toMatch(/worker log/);
      expect(JSON.stringify(run.timeline)).not.toMatch(RAW_ERROR);
      expect(run.error).toMatchObject({ code: 'INTERNAL_ERROR' });
      expect(JSON.stringify(run.error)).not.toMatch(RAW_ERROR);
      expect(model.requests.length).toBe(calls);
      // The operator finds the error by the reference.
      const logged = await eventually(
        'the worker log line',
        async () =>
          world.stack
            .logs()
            .split('\n')
            .find((l) =>
              l.includes(`unexpected failure (reference: workflow agent-${agent.id}, run ${run.temporal.runId}`),
            ),
        10_000,
      );
      expect(logged).toMatch(/TypeError/);
    }, 90_000);
  });
});
