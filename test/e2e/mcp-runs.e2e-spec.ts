import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ReferenceSite } from '../../examples/site/site.js';
import { issueServerCert } from '../../examples/site/tls.js';
import { stopChild } from '../../scripts/runtime/processes.js';
import { type FakeModel, type RecordedRequest, toolNamed } from '../fixtures/fake-model.js';
import { CountingPeer } from '../fixtures/mcp/counting-peer.js';
import type { Http } from '../utils/http.js';
import { eventually, waitForRun } from '../utils/runs.js';
import type { Stack } from '../utils/stack.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

/** The model's name of the counting peer's `events.record` (mapped: the model's names take no dot). */
function recordTool(request: RecordedRequest): string {
  const found = request.body.tools?.find((t) => t.name.endsWith('__events_record'));
  if (found === undefined) {
    throw new Error(`no events.record among ${request.body.tools?.map((t) => t.name).join(', ')}`);
  }
  return found.name;
}

describe('agent runs with an MCP server (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let peer: CountingPeer;

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000', SITE_ALLOW_PRIVATE_HOSTS: 'localhost' } });
    ({ site, model, stack, http, admin } = world);
    peer = await CountingPeer.start(await issueServerCert(world.sites.ca));
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await peer?.stop();
    await world?.stop();
  });

  /** A user with the reference site (bearer token) and the counting MCP server (no authorization) in the vault. */
  async function userWithSites(): Promise<{ user: TestUser; siteId: string; mcpId: string }> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    const mcp = await http.post('/api/vault/sites', { url: peer.url }, { token: user.token });
    expect(mcp.status).toBe(201);
    expect(mcp.body).toMatchObject({ protocol: 'mcp', status: 'ready' });
    return { user, siteId: added.body.id, mcpId: mcp.body.id };
  }

  it('a run uses a site tool and an MCP tool, survives a worker SIGKILL during the MCP call, one effect at the server', async () => {
    const { user, siteId, mcpId } = await userWithSites();
    const agent = await http.post(
      '/api/agents',
      { name: 'Logger', systemPrompt: 'You log.', siteIds: [siteId, mcpId], trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    const siteEffects = site.stats.effects;
    const events = peer.events.length;
    const calls = peer.calls.length;
    model.script(
      (req) => ({
        toolUses: [
          { name: toolNamed(req, 'create_note'), input: { title: 'Before the log' } },
          { name: recordTool(req), input: { title: 'Exactly once' } },
        ],
      }),
      { text: 'Noted and logged.' },
    );
    const release = peer.hold();
    let released = false;
    try {
      const runId = (await http.post(`/api/agents/${agent.body.id}/runs`, {}, { token: user.token })).body.id;
      // The MCP call has reached the server (its effect done) and is held open: the worker dies mid-call.
      await eventually('the MCP call to reach the server', async () =>
        peer.calls.slice(calls).some((c) => c.tool === 'events.record') ? true : undefined,
      );
      stack.worker!.child.kill('SIGKILL');
      await stopChild(stack.worker!.child);
      release();
      released = true;
      stack.worker = stack.spawn('worker', 'src/worker.js');
      const run = await waitForRun(http, user.token, runId, undefined, 90_000).catch((err: unknown) => {
        throw stack.explain(err, runId);
      });
      expect(run.status).toBe('completed');

      // Exactly one effect at each: the retried MCP call carried the first attempt's idempotency hint.
      expect(site.stats.effects - siteEffects).toBe(1);
      expect(peer.events.length - events).toBe(1);
      const attempts = peer.calls.slice(calls).filter((c) => c.tool === 'events.record');
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      const key = attempts[0]!.metaKey;
      expect(key).toEqual(expect.any(String));
      for (const attempt of attempts) {
        expect(attempt).toMatchObject({ args: { title: 'Exactly once' }, metaKey: key, headerKey: key });
      }
      const number = peer.events.length;

      // The timeline keeps its shapes: the server's own tool name, its {content, structuredContent} result.
      const toolCalls = run.timeline.filter((e) => e.type === 'tool_call');
      expect(toolCalls.map((e) => e.tool)).toEqual(expect.arrayContaining(['create_note', 'events.record']));
      const results = run.timeline.filter((e) => e.type === 'tool_result');
      const logged = results.filter((e) => e.tool === 'events.record');
      expect(logged.at(-1)).toMatchObject({
        site: 'Event log',
        ok: true,
        result: {
          content: [{ type: 'text', text: `Recorded "Exactly once" as event #${number}` }],
          structuredContent: { event: number },
        },
      });
      expect(logged.at(-1)!.attempt).toBeGreaterThanOrEqual(2);
      expect(results.find((e) => e.tool === 'create_note')).toMatchObject({ ok: true });

      // The model got the site's answer as JSON text and the MCP result as a text block.
      const given = model.requests.at(-1)!.body.messages.at(-1)!.content as Array<{ content: unknown }>;
      expect(typeof given[0]!.content).toBe('string');
      expect(given[0]!.content as string).toContain('Before the log');
      expect(given[1]!.content).toEqual([{ type: 'text', text: `Recorded "Exactly once" as event #${number}` }]);
    } finally {
      if (!released) {
        release();
      }
    }
    // Past the 90 s wait above: a slow recovery fails with the run's last view and the stack's lines about it.
  }, 150_000);
});
