import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ReferenceSite } from '../../examples/site/site.js';
import { type FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { callerHeaders, legacyClient, modernClient } from '../fixtures/mcp-server/clients.js';
import type { Http } from '../utils/http.js';
import { eventually } from '../utils/runs.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';
import { startWorld, type World } from '../utils/world.js';

const AGENT_TOOL = 'agent__careful';
const SITE = 'Reference Notebook';

interface Awaiting {
  approvalId: string;
  site: string;
  tool: string;
  scope: string;
  expiresAt: string;
}

/**
 * A run started from an MCP client that waits for an approval (its agent's policy lists `write`): the task
 * reports input_required, the client decides with decide_approval, and wait mode says it waits (e2e).
 */
describe('approvals through the MCP endpoint (e2e)', () => {
  let world: World;
  let site: ReferenceSite;
  let http: Http;
  let model: FakeModel;
  let mcpUrl: string;
  let owner: TestUser;
  let viewer: TestUser;
  let workspaceId: string;
  let headers: Record<string, string>;
  let agentId: string;

  beforeAll(async () => {
    world = await startWorld({
      // Wait mode would hold a call up to 600 s here: the wait-mode test proves it answers once the run waits for a person.
      env: { MCP_ALLOW_API_TOKENS: 'true', OUTGOING_CALLS_PER_MINUTE: '1000', MCP_RUN_WAIT_SECONDS: '600' },
    });
    ({ site, http, model } = world);
    mcpUrl = `${world.stack.baseUrl}/mcp`;
    owner = await registerUser(http);
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team', credits: 100_000 }, { token: world.admin.token });
    workspaceId = (await http.post('/api/workspaces', { name: 'Approvals' }, { token: owner.token })).body.id as string;
    headers = { 'x-workspace-id': workspaceId };
    const added = await http.post('/api/vault/sites', { url: site.url }, { token: owner.token, headers });
    expect(added.status).toBe(201);
    await http.post(
      `/api/vault/sites/${added.body.id}/token`,
      { token: site.issueApiToken('alice').token },
      { token: owner.token, headers },
    );
    const agent = await http.post(
      '/api/agents',
      {
        name: 'Careful',
        systemPrompt: 'You take notes, carefully.',
        siteIds: [added.body.id],
        trigger: { type: 'manual' },
        approvals: { scopes: ['write'] },
      },
      { token: owner.token, headers },
    );
    expect(agent.status).toBe(201);
    expect(agent.body.approvals).toMatchObject({ scopes: ['write'] });
    agentId = agent.body.id as string;
    viewer = await registerUser(http);
    await joinWorkspace(http, workspaceId, owner.token, viewer, 'viewer');
  });

  afterAll(async () => {
    await world?.stop();
  });

  /** The model asks for one note titled `title`, then (once `gate` opens, when given) says it is written. */
  function scriptNote(title: string, gate?: Promise<void>): void {
    model.script((req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title } }] }), {
      text: `"${title}" is written.`,
      ...(gate !== undefined ? { gate } : {}),
    });
  }

  const notesTitled = (title: string) => site.notesOf('alice').filter((n) => n.title === title).length;

  /** The run once it ended (REST, in the workspace). */
  async function ended(runId: string): Promise<{ status: string }> {
    return eventually(
      `run ${runId} ended`,
      async () => {
        const run = await http.get(`/api/runs/${runId}`, { token: owner.token, headers });
        return ['completed', 'failed', 'cancelled'].includes(run.body.status) ? run.body : undefined;
      },
      60_000,
    );
  }

  /** The run once it waits for an approval (REST, as the console reads it). */
  async function awaited(runId: string): Promise<Awaiting> {
    return eventually(`run ${runId} awaiting an approval`, async () => {
      const run = await http.get(`/api/runs/${runId}`, { token: owner.token, headers });
      return (run.body.awaiting as Awaiting | null) ?? undefined;
    });
  }

  it('a task reaches input_required naming the call and the console; decide_approval approves; it completes', async () => {
    const title = 'Approved through MCP';
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    scriptNote(title, gate);
    const client = await legacyClient(mcpUrl, callerHeaders(owner.token, workspaceId));
    try {
      const listed = (await client.listTools()).tools.find((t) => t.name === 'decide_approval');
      expect(listed).toMatchObject({
        inputSchema: { required: ['runId', 'approvalId', 'decision'] },
        annotations: { readOnlyHint: false, destructiveHint: false },
      });
      const created = await client.request(
        { method: 'tools/call', params: { name: AGENT_TOOL, arguments: { input: 'Note it' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      const waiting = await eventually('the task to need input', async () => {
        const task = await client.experimental.tasks.getTask(taskId);
        return task.status === 'input_required' ? task : undefined;
      });
      const awaiting = await awaited(taskId);
      expect(awaiting).toMatchObject({ site: SITE, tool: 'create_note', scope: 'write' });
      expect(waiting.statusMessage).toContain(`create_note of ${SITE}`);
      expect(waiting.statusMessage).toContain(`${world.stack.baseUrl}/runs/${taskId}`);
      expect(waiting.statusMessage).toContain(awaiting.approvalId);
      expect(notesTitled(title)).toBe(0);

      const decided = await client.callTool({
        name: 'decide_approval',
        arguments: { runId: taskId, approvalId: awaiting.approvalId, decision: 'approve', note: 'Go ahead' },
      });
      expect(decided.isError).not.toBe(true);
      expect(decided.structuredContent).toMatchObject({ id: taskId, status: 'active', awaiting: null });
      const timeline = (decided.structuredContent as { timeline: Array<Record<string, unknown>> }).timeline;
      expect(timeline).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'approval_decided', decision: 'approve', note: 'Go ahead' }),
        ]),
      );
      // Decided, the run is held at its next model turn: the task works again.
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working' });

      release();
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: `"${title}" is written.` }]);
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
      expect(notesTitled(title)).toBe(1);
    } finally {
      release();
      await client.close();
    }
  });

  it('refuses a viewer’s decide_approval (PERMISSION_DENIED) and bad input; a member’s denial ends the wait', async () => {
    const title = 'Never written';
    scriptNote(title);
    const started = await http.post(
      `/api/agents/${agentId}/runs`,
      { input: 'Note it' },
      { token: owner.token, headers },
    );
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    const awaiting = await awaited(runId);
    const seen = await modernClient(mcpUrl, callerHeaders(viewer.token, workspaceId));
    const member = await modernClient(mcpUrl, callerHeaders(owner.token, workspaceId));
    try {
      await expect(
        seen.callTool({
          name: 'decide_approval',
          arguments: { runId, approvalId: awaiting.approvalId, decision: 'approve' },
        }),
      ).rejects.toMatchObject({ code: -32000, data: { code: 'PERMISSION_DENIED', statusCode: 403 } });
      expect((await http.get(`/api/runs/${runId}`, { token: owner.token, headers })).body.awaiting).toEqual(awaiting);

      await expect(
        member.callTool({ name: 'decide_approval', arguments: { runId, decision: 'maybe' } }),
      ).rejects.toMatchObject({ code: -32602, data: { code: 'VALIDATION_ERROR', statusCode: 400 } });
      await expect(
        member.callTool({
          name: 'decide_approval',
          arguments: { runId, approvalId: 'not-this-one', decision: 'deny' },
        }),
      ).rejects.toMatchObject({ code: -32602, data: { code: 'VALIDATION_ERROR' } });

      const denied = await member.callTool({
        name: 'decide_approval',
        arguments: { runId, approvalId: awaiting.approvalId, decision: 'deny', note: 'Not this one' },
      });
      expect(denied.structuredContent).toMatchObject({ id: runId, awaiting: null });
      expect((await ended(runId)).status).toBe('completed');
      expect(notesTitled(title)).toBe(0);
    } finally {
      await seen.close();
      await member.close();
    }
  });

  // MCP_RUN_WAIT_SECONDS is 600 here: the call answers once the run waits for a person, not after the wait (the
  // client's 60 s request timeout would fail it otherwise).
  it('in wait mode tells of the wait in progress and answers as soon as the run awaits approval, with its id', async () => {
    const title = 'Waited for';
    scriptNote(title);
    const client = await modernClient(mcpUrl, callerHeaders(owner.token, workspaceId));
    try {
      const progress: Array<{ message?: string }> = [];
      const answer = await client.callTool(
        { name: AGENT_TOOL, arguments: { input: 'Note it' } },
        { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
      );
      expect(answer.isError).not.toBe(true);
      const { runId, status, awaiting } = answer.structuredContent as {
        runId: string;
        status: string;
        awaiting: Awaiting;
      };
      expect(status).toBe('active');
      expect(awaiting).toMatchObject({ site: SITE, tool: 'create_note', scope: 'write' });
      const text = (answer.content as Array<{ text: string }>)[0]!.text;
      expect(text).toContain(`Run ${runId} is waiting for approval to call create_note of ${SITE}`);
      expect(text).toContain('decide_approval');
      expect(progress.map((p) => p.message)).toContain(`Waiting for approval to call create_note of ${SITE}`);

      const read = await client.callTool({ name: 'get_run', arguments: { runId } });
      expect(read.structuredContent).toMatchObject({ id: runId, status: 'active', awaiting });

      await client.callTool({
        name: 'decide_approval',
        arguments: { runId, approvalId: awaiting.approvalId, decision: 'deny' },
      });
      expect((await ended(runId)).status).toBe('completed');
      expect(notesTitled(title)).toBe(0);
    } finally {
      await client.close();
    }
  });
});
