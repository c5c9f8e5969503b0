import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ActivityFailure, ApplicationFailure, Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import type { forgedToolCallWorkflow } from '../fixtures/forged-tool-call.workflow.js';
import { testEnv } from '../setup/shared-runtime.js';
import type { Http } from '../utils/http.js';
import { waitForRun } from '../utils/runs.js';
import { startWorld, type World } from '../utils/world.js';
import { registerUser, type TestUser } from '../utils/users.js';
import type { ReferenceSite } from '../../examples/site/site.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** What the worker checks of its own inputs, and how long a site may make a run wait. */
describe('run guards: forged activity tasks and Retry-After caps (e2e)', () => {
  let world: World;
  let http: Http;
  let site: ReferenceSite;
  let model: FakeModel;
  let admin: TestUser;

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000' } });
    ({ http, site, model, admin } = world);
  });

  beforeEach(() => model.reset());

  afterAll(async () => {
    await world?.stop();
  });

  async function userWithSite(username: 'alice' | 'root'): Promise<{ user: TestUser; siteId: string }> {
    const user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness' }, { token: admin.token });
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken(username).token },
      { token: user.token },
    );
    return { user, siteId: added.body.id };
  }

  async function runOnce(user: TestUser, siteId: string) {
    const agent = await http.post(
      '/api/agents',
      { name: 'Guarded', systemPrompt: 'You keep notes.', siteIds: [siteId], trigger: { type: 'manual' } },
      { token: user.token },
    );
    const started = await http.post(`/api/agents/${agent.body.id}/runs`, {}, { token: user.token });
    return { agentId: agent.body.id as string, runId: started.body.id as string };
  }

  it('a callTool task naming another user’s site is refused (PERMISSION_DENIED); that site receives nothing', async () => {
    const attacker = await userWithSite('alice');
    const victim = await userWithSite('root');
    model.script({ text: 'Nothing to do.' });
    const { runId } = await runOnce(attacker.user, attacker.siteId);
    expect((await waitForRun(http, attacker.user.token, runId)).status).toBe('completed');

    // A worker of our own, on a queue of our own, whose workflow schedules callTool on the service's queue.
    const taskQueue = `forger-${Date.now()}`;
    const nativeConnection = await NativeConnection.connect({ address: testEnv('temporalAddress') });
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowsPath: path.join(fixtures, 'forged-tool-call.workflow.js'),
    });
    const connection = await Connection.connect({ address: testEnv('temporalAddress') });
    const client = new Client({ connection });
    const serviceQueue = world.stack.env.TEMPORAL_TASK_QUEUE!;
    const forge = (siteId: string) =>
      client.workflow.execute<typeof forgedToolCallWorkflow>('forgedToolCallWorkflow', {
        taskQueue,
        workflowId: `forged-${siteId}-${Date.now()}`,
        args: [
          serviceQueue,
          { runId, userId: attacker.user.id, siteId, siteName: 'Reference Notebook', tool: 'list_notes', input: {} },
        ],
      });
    try {
      await worker.runUntil(async () => {
        // The control: the same forged path with the run's own site reaches the site, so the path is real.
        const before = site.stats.toolCalls;
        const own = await forge(attacker.siteId);
        expect(own.result).toEqual(expect.objectContaining({ results: expect.any(Array) }));
        expect(site.stats.toolCalls).toBe(before + 1);
        expect(site.lastToolRequest?.headers.authorization).toBeDefined();

        const callsBefore = site.stats.toolCalls;
        const refused = await forge(victim.siteId).catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(WorkflowFailedError);
        const activity = (refused as WorkflowFailedError).cause;
        expect(activity).toBeInstanceOf(ActivityFailure);
        const cause = (activity as ActivityFailure).cause as ApplicationFailure;
        expect(cause).toBeInstanceOf(ApplicationFailure);
        expect(cause.type).toBe('PERMISSION_DENIED');
        expect(cause.nonRetryable).toBe(true);
        expect(site.stats.toolCalls).toBe(callsBefore); // the victim's credential was never used

        // An id that is not a uuid is refused the same way, before any query.
        const malformed = await forge('not-a-uuid').catch((err: unknown) => err);
        expect(((malformed as WorkflowFailedError).cause as ActivityFailure).cause).toMatchObject({
          type: 'PERMISSION_DENIED',
        });
      });
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
    expect(world.stack.logs()).toMatch(/tool call refused for run .*: the site is not in the vault/);
  });

  it('a site asking to wait longer than 300 s fails the tool call at once; the run goes on and shows it', async () => {
    const { user, siteId } = await userWithSite('alice');
    site.failures.push({ tool: 'list_notes', status: 429, retryAfterSeconds: 100_000 });
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'list_notes'), input: {} }] }), { text: 'Gave up.' });
    const started = Date.now();
    const { runId } = await runOnce(user, siteId);
    const run = await waitForRun(http, user.token, runId, undefined, 30_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(run.status).toBe('completed');
    expect(run.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(run.timeline[3]).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_ERROR', attempt: 1 });
    expect(run.timeline[3]!.error).toContain('asked to wait 100000 s');
    expect(run.timeline[3]!.error).toContain('300 s cap');
  });
});
