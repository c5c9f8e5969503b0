import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toolNamed } from '../fixtures/fake-model.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser } from '../utils/users.js';

/** How long the reference site takes to answer the tool call: the worker is stopped in the middle of it. */
const TOOL_DELAY_MS = 4_000;

describe('the worker drains on SIGTERM (e2e)', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000' } });
  });

  afterAll(async () => {
    await world?.stop();
  });

  it('SIGTERM during a tool call: the call completes and is recorded, the site sees it once, the run completes on the next worker', async () => {
    const { http, admin, site, model, stack } = world;
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const agent = (
      await http.post(
        '/api/agents',
        { name: 'Drained', systemPrompt: 'You keep notes.', siteIds: [added.body.id], trigger: { type: 'manual' } },
        { token: user.token },
      )
    ).body;
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'Drained once' } }] }), {
      text: 'Noted.',
    });
    const calls = site.stats.toolCalls;
    const effects = site.stats.effects;
    site.toolDelayMs = TOOL_DELAY_MS;
    try {
      const runId = (await http.post(`/api/agents/${agent.id}/runs`, {}, { token: user.token })).body.id;
      await eventually('the tool call to reach the site', async () =>
        site.stats.toolCalls > calls ? true : undefined,
      );

      // SIGTERM alone, as Docker and systemd send it; the process must exit by itself, cleanly.
      const worker = stack.worker!.child;
      const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
      const stopping = Date.now();
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
      // It waited for the call in flight, which the site answered in full: one call, one note. A slow
      // drain fails with the worker's state changes (SDK lines with their times), to tell where it waited.
      const drainedMs = Date.now() - stopping;
      if (drainedMs >= TOOL_DELAY_MS + 30_000) {
        throw stack.explain(new Error(`the worker took ${drainedMs} ms to exit after SIGTERM`), 'Worker state');
      }
      expect(site.stats.toolCalls - calls).toBe(1);
      expect(site.stats.effects - effects).toBe(1);

      stack.worker = undefined;
      await stack.startWorker();
      const run = await waitForRun(http, user.token, runId, undefined, 90_000).catch((err: unknown) => {
        throw stack.explain(err, runId);
      });
      expect(run.status).toBe('completed');
      // The drained call's result is the one recorded: first attempt, nothing retried.
      const results = run.timeline.filter((event) => event.type === 'tool_result');
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ ok: true, attempt: 1 });
      expect(site.stats.toolCalls - calls).toBe(1);
      expect(site.notesOf('alice').filter((note) => note.title === 'Drained once')).toHaveLength(1);
    } finally {
      site.toolDelayMs = 0;
    }
    // Past the 90 s wait above: a slow recovery fails with the run's last view and the stack's lines about it.
  }, 150_000);
});
