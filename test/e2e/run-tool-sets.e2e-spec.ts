import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto, { type temporal } from '@temporalio/proto';
import type { ReferenceSite } from '../../examples/site/site.js';
import { decodeHistoryEvents } from '../../src/temporal/history-codec.js';
import { FakeModel, toolNamed } from '../fixtures/fake-model.js';
import { sql } from '../utils/db.js';
import { Http } from '../utils/http.js';
import { registerAdmin } from '../utils/admin.js';
import { waitForRun, type RunView } from '../utils/runs.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { Stack } from '../utils/stack.js';
import { temporalClient, testPayloadCodec } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Sites at the manifest's limits: 200 tools each, every description at 5,000 characters. */
const SITES = 3;
const TOOLS_PER_SITE = 200;
const DESCRIPTION_CHARS = 5000;
/** Found in every tool description and every property description of the big manifests. */
const DESCRIPTION_MARKER = 'mk-tool-description-7c1e';
const SCHEMA_MARKER = 'mk-schema-property-2b9d';
const PROMPT_MARKER = 'mk-system-prompt-51af';

const filler = (marker: string, n: number): string => `${marker} ${n} `.padEnd(DESCRIPTION_CHARS, 'x');

/**
 * The reference site's manifest grown to the limits (MANIFEST_SCHEMA: 200 tools, descriptions of 5,000
 * characters): its own tools first, so a run can call one, then tools that only describe themselves.
 */
function manifestAtLimits(site: ReferenceSite, index: number): Record<string, unknown> {
  const manifest = site.manifest() as { tools: Array<Record<string, unknown>> };
  const tools: Array<Record<string, unknown>> = manifest.tools.map((t, n) => ({
    ...t,
    description: filler(`${DESCRIPTION_MARKER} own`, n),
  }));
  for (let n = tools.length; n < TOOLS_PER_SITE; n += 1) {
    tools.push({
      name: `filler_tool_${n}`,
      description: filler(DESCRIPTION_MARKER, n),
      scope: 'read',
      input_schema: {
        type: 'object',
        properties: { text: { type: 'string', description: filler(SCHEMA_MARKER, n) } },
        required: [],
      },
    });
  }
  return { ...manifest, name: `Notebook at the limits ${index}`, tools };
}

/** Every payload's data, decoded to text, with the events' JSON. */
function serialized(events: HistoryEvent[]): string {
  return [JSON.stringify(events), ...payloadsOf(events).map((p) => Buffer.from(p.data ?? []).toString('utf8'))].join(
    '\n',
  );
}

function payloadsOf(node: unknown, out: Payload[] = []): Payload[] {
  if (typeof node !== 'object' || node === null || node instanceof Uint8Array) {
    return out;
  }
  if ((node as Payload).metadata?.encoding instanceof Uint8Array) {
    out.push(node as Payload);
    return out;
  }
  for (const value of Object.values(node)) {
    payloadsOf(value, out);
  }
  return out;
}

function copyOf(events: HistoryEvent[]): HistoryEvent[] {
  const History = proto.temporal.api.history.v1.History;
  return History.decode(History.encode({ events }).finish()).events;
}

describe('tool definitions stay out of workflow payloads (e2e)', () => {
  let sites: TestSites;
  let model: FakeModel;
  let stack: Stack;
  let http: Http;
  let user: TestUser;
  let big: ReferenceSite[];
  let run: RunView;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    sites = await testSites();
    big = [];
    for (let i = 0; i < SITES; i += 1) {
      big.push(await sites.start());
    }
    big.forEach((site, i) => {
      site.manifestOverride = { json: manifestAtLimits(site, i + 1) };
    });
    model = await FakeModel.start();
    stack = await Stack.start({
      env: {
        ...siteEnv(sites, big),
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: model.url,
        OUTGOING_CALLS_PER_MINUTE: '1000',
      },
    });
    http = new Http(stack.baseUrl);
    const admin = await registerAdmin(http, stack);
    user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 100_000 }, { token: admin.token });
    ({ client, connection } = await temporalClient());
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await model?.stop();
    await sites?.stopAll();
  });

  it('runs an agent with several sites at the manifest limits to completion, its history holding no tool description, schema or system prompt', async () => {
    const siteIds: string[] = [];
    for (const site of big) {
      const added = await http.post('/api/vault/sites', { url: site.url }, { token: user.token });
      expect(added.status).toBe(201);
      siteIds.push(added.body.id as string);
      await http.post(
        `/api/vault/sites/${added.body.id}/token`,
        { token: site.issueApiToken('alice').token },
        { token: user.token },
      );
    }
    const agent = await http.post(
      '/api/agents',
      { name: 'Big tools', systemPrompt: `Keep notes. ${PROMPT_MARKER}`, siteIds, trigger: { type: 'manual' } },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    model.script(
      (req) => ({ toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: 'From a big run', body: 'b' } }] }),
      { text: 'Noted.' },
    );
    const started = await http.post(
      `/api/agents/${agent.body.id}/runs`,
      { input: 'Write it down.' },
      { token: user.token },
    );
    expect(started.status).toBe(201);
    run = await waitForRun(http, user.token, started.body.id as string, undefined, 120_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'completed', error: null });

    // The model was shown every tool of every site, with their definitions, on both turns.
    expect(model.requests).toHaveLength(2);
    for (const request of model.requests) {
      expect(request.body.tools).toHaveLength(SITES * TOOLS_PER_SITE);
      expect(JSON.stringify(request.body.tools)).toContain(SCHEMA_MARKER);
      expect(JSON.stringify(request.body.system)).toContain(PROMPT_MARKER);
    }
    const toolsBytes = Buffer.byteLength(JSON.stringify(model.requests[0]!.body.tools));
    expect(toolsBytes).toBeGreaterThan(4 * 1024 * 1024); // over Temporal's payload and gRPC limits
    // The call reached the site it was routed to.
    expect(big.reduce((n, site) => n + site.stats.toolCalls, 0)).toBe(1);
    expect(run.timeline.map((e) => e.type)).toContain('tool_call');

    // The run's history, decoded with the codec: ids and a hash, never a definition or the prompt.
    const events =
      (await client.workflow.getHandle(run.temporal.workflowId, run.temporal.runId!).fetchHistory()).events ?? [];
    const decoded = await decodeHistoryEvents(copyOf(events), testPayloadCodec());
    const text = serialized(decoded);
    expect(text).toContain('Noted.'); // decoded: the run's answer is there
    for (const marker of [DESCRIPTION_MARKER, SCHEMA_MARKER, PROMPT_MARKER]) {
      expect({ marker, found: text.includes(marker) }).toEqual({ marker, found: false });
    }
    const largest = Math.max(...payloadsOf(decoded).map((p) => p.data?.length ?? 0));
    expect(largest).toBeLessThan(16 * 1024);

    // The run's row names its set, stored once, by the sha256 of its content.
    const [row] = await sql<{ hash: string; bytes: number; matches: boolean }>(
      'SELECT s.hash, octet_length(s.content) AS bytes, ' +
        "encode(sha256(convert_to(s.content, 'UTF8')), 'hex') = s.hash AS matches " +
        'FROM runs r JOIN run_tool_sets s ON s.hash = r.tool_set_hash WHERE r.id = $1',
      [run.id],
    );
    expect(row).toMatchObject({ matches: true });
    expect(Number(row!.bytes)).toBeGreaterThan(toolsBytes);
  }, 240_000);
});
