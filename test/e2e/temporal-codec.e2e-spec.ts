import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import proto, { type temporal } from '@temporalio/proto';
import { decodeHistoryEvents } from '../../src/temporal/history-codec.js';
import type { TriggeredEntryDto } from '../../src/runs/dto/timeline-entry.dto.js';
import { type TimelineEntry, timelineFromHistory } from '../../src/runs/timeline.js';
import { ARCHIVE_AT_HANDOVER_PATCH, RUN_TOOL_SETS_PATCH } from '../../workflows/contracts.js';
import { toolNamed } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { expectError } from '../utils/http.js';
import { waitForRun, type RunView } from '../utils/runs.js';
import { testPayloadCodec } from '../utils/temporal.js';
import { registerUser, type TestUser } from '../utils/users.js';
import { startWorld, type World } from '../utils/world.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const MARKERS = {
  payload: 'mk-webhook-payload-5f1c',
  prompt: 'mk-system-prompt-9a2e',
  agentName: 'mk-agent-name-77b0',
  toolInput: 'mk-tool-input-c3d4',
  toolResult: 'mk-tool-result-e8f9',
  answer: 'mk-final-answer-1b6a',
  siteError: 'mk-site-error-text-4d2f',
};

/**
 * Everything in the events as text: their JSON (protobuf's JSON: bytes as base64), then every
 * payload's metadata and data decoded from bytes to text.
 */
function serialized(events: HistoryEvent[]): string {
  const bytes = payloadsOf(events).flatMap(({ payload }) => [
    ...Object.values(payload.metadata ?? {}).map((v) => Buffer.from(v).toString('utf8')),
    Buffer.from(payload.data ?? new Uint8Array()).toString('utf8'),
  ]);
  return [JSON.stringify(events), ...bytes].join('\n');
}

/** A deep copy of history events that keeps them protobuf messages (structuredClone would drop Long's methods). */
function copyOf(events: HistoryEvent[]): HistoryEvent[] {
  const History = proto.temporal.api.history.v1.History;
  return History.decode(History.encode({ events }).finish()).events;
}

/** Every payload of the events with where it is (found as the codec's history walk finds them). */
function payloadsOf(node: unknown, at = '', out: Array<{ at: string; payload: Payload }> = []) {
  if (typeof node !== 'object' || node === null || node instanceof Uint8Array) {
    return out;
  }
  const metadata = (node as Payload).metadata;
  if (metadata !== undefined && metadata !== null && metadata.encoding instanceof Uint8Array) {
    out.push({ at, payload: node as Payload });
    return out;
  }
  for (const [key, value] of Object.entries(node)) {
    payloadsOf(value, `${at}.${key}`, out);
  }
  return out;
}

const encodingOf = (payload: Payload): string => Buffer.from(payload.metadata!.encoding!).toString();

/** The Temporal UI's origin for this stack (TEMPORAL_UI_ORIGIN). */
const UI_ORIGIN = 'http://localhost:18233';

const asJson = (payload: Payload): { metadata: Record<string, string>; data: string } => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
});

describe('run data encrypted in Temporal, readable by operators (e2e)', () => {
  let world: World;
  let user: TestUser;
  let run: RunView;
  let agentId: string;
  let rawRun: HistoryEvent[];
  let rawAgent: HistoryEvent[];
  const plain = { connection: undefined as Connection | undefined };

  beforeAll(async () => {
    world = await startWorld({ env: { OUTGOING_CALLS_PER_MINUTE: '1000', TEMPORAL_UI_ORIGIN: UI_ORIGIN } });
    const { http, admin, site, model } = world;
    user = await registerUser(http);
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 100_000 }, { token: admin.token });
    const siteId = (await http.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id as string;
    await http.post(
      `/api/vault/sites/${siteId}/token`,
      { token: site.issueApiToken('alice').token },
      { token: user.token },
    );
    // A note that only a tool's result can show (made outside any run).
    const seeded = await http.post(
      `/api/vault/sites/${siteId}/tools/create_note/call`,
      { input: { title: MARKERS.toolResult, body: 'seeded' } },
      { token: user.token },
    );
    expect(seeded.status).toBe(200);
    const agent = await http.post(
      '/api/agents',
      {
        name: MARKERS.agentName,
        systemPrompt: `Triage tickets. ${MARKERS.prompt}`,
        siteIds: [siteId],
        trigger: { type: 'webhook', schema: [{ name: 'ticket', type: 'string', required: true }] },
      },
      { token: user.token },
    );
    expect(agent.status).toBe(201);
    agentId = agent.body.id as string;
    model.script(
      (req) => ({
        toolUses: [
          { name: toolNamed(req, 'create_note'), input: { title: MARKERS.toolInput, body: 'from the run' } },
          { name: toolNamed(req, 'list_notes'), input: {} },
          { name: toolNamed(req, 'get_note'), input: { id: 'n-1' } },
        ],
      }),
      { text: `Done: ${MARKERS.answer}` },
    );
    // The site refuses the third call with an error text of its own: a failure message of the run.
    site.failures.push({ tool: 'get_note', status: 403, rawBody: JSON.stringify({ error: MARKERS.siteError }) });
    const fired = await http.post(
      `/api/webhooks/agent/${agentId}`,
      { ticket: MARKERS.payload },
      { headers: { 'x-webhook-secret': agent.body.webhookSecret as string } },
    );
    expect(fired.status).toBe(202);
    run = await waitForRun(http, user.token, fired.body.runId as string);
    expect(run.status).toBe('completed');
    // The model did see the markers: they were really in the run's data.
    expect(JSON.stringify(model.requests.map((r) => r.body))).toContain(MARKERS.prompt);
    // The payload reached the model in the run's first message, read from the run's row.
    expect(JSON.stringify(model.requests.map((r) => r.body.messages[0]))).toContain(MARKERS.payload);

    // A client WITHOUT the codec, as anyone reading Temporal's database or UI would.
    plain.connection = await Connection.connect({ address: testEnv('temporalAddress') });
    const raw = new Client({ connection: plain.connection });
    // The execution of the agent's queue that ran the run (it runs each run itself), and its latest one.
    rawRun = (await raw.workflow.getHandle(run.temporal.workflowId, run.temporal.runId!).fetchHistory()).events ?? [];
    rawAgent = (await raw.workflow.getHandle(`agent-${agentId}`).fetchHistory()).events ?? [];
  });

  afterAll(async () => {
    await plain.connection?.close();
    await world?.stop();
  });

  it('keeps no marker of the payload, prompt, agent name, tool input, tool result, site error or answer in the raw history', () => {
    const text = serialized([...rawRun, ...rawAgent]);
    expect(text.length).toBeGreaterThan(1000);
    // The serialization shows bytes as text: the ids the search attributes carry are readable in it.
    expect(text).toContain(`"${agentId}"`);
    for (const [what, marker] of Object.entries(MARKERS)) {
      expect({ what, found: text.includes(marker) }).toEqual({ what, found: false });
    }
    // Every payload the service wrote (inputs, results, signals, memo) is sealed; only search
    // attributes (ids) stay readable, as they must for filtering.
    // Core's own markers (a local activity's bookkeeping, patch ids) are not the SDK's payloads:
    // they hold no run data, and the activity result inside a marker is sealed.
    const payloads = payloadsOf([...rawRun, ...rawAgent]);
    expect(payloads.filter((p) => encodingOf(p.payload) === 'binary/encrypted').length).toBeGreaterThan(10);
    const clear = payloads.filter((p) => encodingOf(p.payload) !== 'binary/encrypted');
    for (const { at } of clear) {
      expect(at).toMatch(
        /\.searchAttributes\.indexedFields\.|\.markerRecordedEventAttributes\.details\.(data|patch-data|patch_data|id|deprecated)\b/,
      );
    }
    // Temporal's own TemporalChangeVersion attribute lists the patch ids the workflows took (code
    // markers, no run data): the run took the tool sets' patch and the archive at the hand-over's, and
    // only them. Every other attribute is one of ours and holds ids (AgentRunIds: a list of them).
    const changeVersions = clear.filter((p) => p.at.includes('.searchAttributes.indexedFields.TemporalChangeVersion'));
    expect(changeVersions.length).toBeGreaterThan(0);
    const taken = changeVersions.flatMap(
      ({ payload }) => JSON.parse(Buffer.from(payload.data!).toString()) as string[],
    );
    expect([...new Set(taken)].sort()).toEqual([ARCHIVE_AT_HANDOVER_PATCH, RUN_TOOL_SETS_PATCH].sort());
    const attributes = clear.filter(
      (p) => p.at.includes('.searchAttributes.') && !p.at.includes('.indexedFields.TemporalChangeVersion'),
    );
    expect(attributes.length).toBeGreaterThan(0);
    const ids = new Set([agentId, user.id, run.id]);
    for (const { payload } of attributes) {
      const value = JSON.parse(Buffer.from(payload.data!).toString()) as string | string[];
      for (const id of Array.isArray(value) ? value : [value]) {
        expect(ids).toContain(id);
      }
    }
  });

  it('decodes with the codec, and the API timeline is the decoded history, markers included', async () => {
    const decoded = await decodeHistoryEvents(copyOf(rawRun), testPayloadCodec());
    const text = serialized(decoded);
    // The webhook's payload is not in Temporal at all, sealed or not: it stays in the run's row, which
    // the run's turns and its timeline read.
    expect(text).not.toContain(MARKERS.payload);
    expect(serialized(await decodeHistoryEvents(copyOf(rawAgent), testPayloadCodec()))).not.toContain(MARKERS.payload);
    // Nor is the system prompt: it is in the run's tool set (run_tool_sets), which the turns read by hash.
    expect(text).not.toContain(MARKERS.prompt);
    for (const marker of [MARKERS.toolInput, MARKERS.toolResult, MARKERS.answer, MARKERS.siteError]) {
      expect(text).toContain(marker);
    }
    expect(serialized(await decodeHistoryEvents(copyOf(rawAgent), testPayloadCodec()))).toContain(MARKERS.agentName);
    // The API's timeline, as before the codec: the same entries, with the run's data in them.
    expect(run.timeline.map((e) => e.type)).toEqual([
      'triggered',
      'model_turn',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'model_turn',
      'completed',
    ]);
    expect(run.timeline[0]).toMatchObject({ triggeredBy: 'webhook', payload: { ticket: MARKERS.payload } });
    expect(run.timeline[2]).toMatchObject({ tool: 'create_note', input: { title: MARKERS.toolInput } });
    expect(JSON.stringify(run.timeline.filter((e) => e.type === 'tool_result'))).toContain(MARKERS.toolResult);
    // The failure's message was encoded (encrypted) in the history and is whole again in the timeline.
    expect(run.timeline[7]).toMatchObject({ tool: 'get_note', ok: false, code: 'TOOL_EXECUTION_ERROR' });
    expect(run.timeline[7]!.error).toContain(MARKERS.siteError);
    expect(serialized(rawRun)).toContain('Encoded failure');
    expect(run.timeline.at(-1)).toMatchObject({ type: 'completed', output: `Done: ${MARKERS.answer}` });
    // The run's part of its queue's execution, with what its row says of its trigger and end.
    const fromRaw = await timelineFromHistory(
      copyOf(rawRun),
      testPayloadCodec(),
      { workflowId: run.temporal.workflowId, runId: run.temporal.runId },
      {
        runId: run.id,
        triggered: run.timeline[0] as TriggeredEntryDto,
        ended: { ...run.timeline.at(-1)!, output: '' } as TimelineEntry,
      },
    );
    // Once the run has ended the API serves its archive, whose closing entry carries the time of the
    // archive step (moments before the close event the history shows); every other entry is the same.
    const closeTimeLeftOut = (timeline: Array<Record<string, unknown>>) =>
      timeline.map((entry, i) => (i === timeline.length - 1 ? { ...entry, at: undefined } : entry));
    expect(closeTimeLeftOut(JSON.parse(JSON.stringify(fromRaw)))).toEqual(closeTimeLeftOut(run.timeline));
  });

  describe('POST /api/temporal-codec/decode', () => {
    /** The run's first tool call as the queue scheduled it (its input names the note to create). */
    const sealedInput = (): Payload =>
      [...rawRun, ...rawAgent].find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callTool')!
        .activityTaskScheduledEventAttributes!.input!.payloads![0]! as Payload;

    it('refuses unauthenticated callers and non-admins, and decodes for an admin', async () => {
      const { http, admin } = world;
      const body = { payloads: [asJson(sealedInput())] };
      expectError(await http.post('/api/temporal-codec/decode', body), 'UNAUTHORIZED', 401);
      expectError(await http.post('/api/temporal-codec/decode', body, { token: user.token }), 'ADMIN_REQUIRED', 403);
      expectError(await http.post('/api/temporal-codec/decode', body, { token: 'not.a.token' }), 'INVALID_TOKEN', 401);
      const res = await http.post('/api/temporal-codec/decode', body, {
        token: admin.token,
        headers: { 'x-namespace': 'default' },
      });
      expect(res.status).toBe(200);
      const [payload] = res.body.payloads as Array<{ metadata: Record<string, string>; data: string }>;
      expect(Buffer.from(payload!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
      expect(JSON.parse(Buffer.from(payload!.data, 'base64').toString())).toMatchObject({
        runId: run.id,
        tool: 'create_note',
        input: { title: MARKERS.toolInput },
      });
      // Payloads it did not seal come back as they were; encode seals what decode opens.
      const clear = asJson(defaultPayloadConverter.toPayload({ hello: 'world' }));
      expect(
        (await http.post('/api/temporal-codec/decode', { payloads: [clear] }, { token: admin.token })).body,
      ).toEqual({
        payloads: [clear],
      });
      const encoded = await http.post('/api/temporal-codec/encode', { payloads: [clear] }, { token: admin.token });
      expect(encoded.status).toBe(200);
      expect(Buffer.from(encoded.body.payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
      expect(
        (await http.post('/api/temporal-codec/decode', encoded.body, { token: admin.token })).body.payloads,
      ).toEqual([clear]);
      expectError(
        await http.post('/api/temporal-codec/encode', { payloads: [clear] }, { token: user.token }),
        'ADMIN_REQUIRED',
        403,
      );
    });

    it('answers bad bodies, a foreign namespace and a payload it cannot open with VALIDATION_ERROR, never 500', async () => {
      const { http, admin } = world;
      const as = { token: admin.token };
      for (const body of [
        {},
        { payloads: null },
        { payloads: 'x' },
        { payloads: [null] },
        { payloads: [[]] },
        { payloads: [{ data: '!!not base64!!' }] },
        { payloads: [{ metadata: { encoding: 5 } }] },
        { payloads: [{ metadata: [] }] },
        { payloads: [], extra: 1 },
      ]) {
        expectError(await http.post('/api/temporal-codec/decode', body, as), 'VALIDATION_ERROR', 400);
      }
      expectError(
        await http.request('POST', '/api/temporal-codec/decode', {
          ...as,
          rawBody: '{"payloads": [',
          headers: { 'content-type': 'application/json' },
        }),
        'VALIDATION_ERROR',
        400,
      );
      const sealed = { payloads: [asJson(sealedInput())] };
      const other = await http.post('/api/temporal-codec/decode', sealed, {
        ...as,
        headers: { 'x-namespace': 'other' },
      });
      expectError(other, 'VALIDATION_ERROR', 400);
      // Sealed under a key this service does not hold: named, not a 500.
      const [foreign] = await testPayloadCodec(`zz:${Buffer.alloc(32, 3).toString('base64')}`).encode([
        defaultPayloadConverter.toPayload('x'),
      ]);
      const refused = await http.post('/api/temporal-codec/decode', { payloads: [asJson(foreign!)] }, as);
      expectError(refused, 'VALIDATION_ERROR', 400);
      expect(refused.body.details).toEqual([{ field: 'payloads[0]', message: expect.stringContaining('"zz"') }]);
    });

    it('answers the Temporal UI’s CORS preflight for its origin only, and the UI’s cookie works only on the codec routes', async () => {
      const { http, admin } = world;
      const uiOrigin = UI_ORIGIN;
      const preflight = await http.request('OPTIONS', '/api/temporal-codec/decode', {
        headers: {
          origin: uiOrigin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
      expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/content-type.*x-namespace.*authorization/);
      const stranger = await http.request('OPTIONS', '/api/temporal-codec/decode', {
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(stranger.headers.get('access-control-allow-origin')).toBeNull();

      // An admin signs the browser in with the form; the cookie then authenticates the UI's calls.
      const form = await http.request('POST', '/api/temporal-codec/session', {
        rawBody: new URLSearchParams({ token: admin.token }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(200);
      const cookie = form.headers.get('set-cookie')!;
      expect(cookie).toMatch(
        /^agentsite_codec=[^;]+; Max-Age=\d+; Path=\/api\/temporal-codec; HttpOnly; SameSite=Strict/,
      );
      const jar = cookie.split(';')[0]!;
      // The path as the UI calls it (a query parameter included).
      const viaCookie = await http.post(
        '/api/temporal-codec/decode?preserveStorageRefs=true',
        { payloads: [asJson(sealedInput())] },
        { headers: { cookie: jar, origin: uiOrigin, 'x-namespace': 'default' } },
      );
      expect(viaCookie.status).toBe(200);
      expect(viaCookie.headers.get('access-control-allow-origin')).toBe(uiOrigin);
      expect(Buffer.from(viaCookie.body.payloads[0].data, 'base64').toString()).toContain(MARKERS.toolInput);
      // The cookie is no credential anywhere else, and a user's token in it is still not an admin's.
      expectError(await http.get('/api/me', { headers: { cookie: jar } }), 'UNAUTHORIZED', 401);
      const userForm = await http.request('POST', '/api/temporal-codec/session', {
        rawBody: new URLSearchParams({ token: user.token }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(userForm, 'ADMIN_REQUIRED', 403);
      // An access token in the cookie (a user's, or an admin's) is no codec token.
      const asUser = await http.post(
        '/api/temporal-codec/decode',
        { payloads: [] },
        { headers: { cookie: `agentsite_codec=${user.token}`, origin: uiOrigin } },
      );
      expectError(asUser, 'INVALID_TOKEN', 401);
      // The refusal still carries the CORS headers, so the UI sees a 403 rather than a network error.
      expect(asUser.headers.get('access-control-allow-origin')).toBe(uiOrigin);
      expect((await http.get('/api/temporal-codec/session')).text).toContain('name="token"');
    });

    it('puts a short-lived token for the codec routes in the cookie, not the admin’s: every other route refuses it, a logout ends it', async () => {
      const { http, admin } = world;
      // A second sign-in of the admin, so its logout leaves the world's token alone.
      const login = await http.post('/api/auth/login', { email: admin.email, password: admin.password });
      expect(login.status).toBe(200);
      const adminToken = login.body.accessToken as string;
      const form = await http.request('POST', '/api/temporal-codec/session', {
        rawBody: new URLSearchParams({ token: adminToken }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(200);
      const cookie = form.headers.get('set-cookie')!;
      const codecToken = /^agentsite_codec=([^;]+);/.exec(cookie)![1]!;
      expect(codecToken).not.toBe(adminToken);
      const claims = JSON.parse(Buffer.from(codecToken.split('.')[1]!, 'base64url').toString()) as Record<
        string,
        unknown
      >;
      expect(claims.aud).toBe('agentsite:temporal-codec');
      const lifetime = (claims.exp as number) - (claims.iat as number);
      expect(lifetime).toBeGreaterThan(0);
      expect(lifetime).toBeLessThanOrEqual(3600);
      expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeLessThanOrEqual(3600);

      // The codec routes take it, from the cookie or as Bearer; the admin's token as Bearer still works (the CLI).
      const body = { payloads: [asJson(sealedInput())] };
      expect(
        (await http.post('/api/temporal-codec/decode', body, { headers: { cookie: `agentsite_codec=${codecToken}` } }))
          .status,
      ).toBe(200);
      expect((await http.post('/api/temporal-codec/encode', { payloads: [] }, { token: codecToken })).status).toBe(200);
      expect((await http.post('/api/temporal-codec/decode', body, { token: adminToken })).status).toBe(200);
      // Every other route refuses it: reads, admin routes, a new codec session, a logout.
      expectError(await http.get('/api/me', { token: codecToken }), 'INVALID_TOKEN', 401);
      expectError(await http.get('/api/admin/users', { token: codecToken }), 'INVALID_TOKEN', 401);
      expectError(
        await http.request('POST', '/api/temporal-codec/session', {
          rawBody: new URLSearchParams({ token: codecToken }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        'INVALID_TOKEN',
        401,
      );
      expectError(await http.post('/api/auth/logout', {}, { token: codecToken }), 'INVALID_TOKEN', 401);

      // Logging out the admin token it was minted from ends it.
      expect((await http.post('/api/auth/logout', {}, { token: adminToken })).status).toBe(204);
      expectError(
        await http.post('/api/temporal-codec/decode', body, { headers: { cookie: `agentsite_codec=${codecToken}` } }),
        'TOKEN_REVOKED',
        401,
      );
    });

    it('serves the temporal CLI: `workflow show --codec-endpoint … --codec-auth "Bearer <admin token>"` prints the run in clear', async () => {
      const show = (auth: string[]) =>
        promisify(execFile)(
          testEnv('temporalCli'),
          [
            'workflow',
            'show',
            '--address',
            testEnv('temporalAddress'),
            '--workflow-id',
            run.temporal.workflowId,
            '--run-id',
            run.temporal.runId!,
            '--output',
            'json',
            '--codec-endpoint',
            `${world.stack.baseUrl}/api/temporal-codec`,
            ...auth,
          ],
          { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
        ).then(
          // The JSON output carries payloads as protobuf JSON (bytes in base64): read their data as text.
          (r) =>
            [...r.stdout.matchAll(/"data": "([A-Za-z0-9+/=]*)"/g)]
              .map((m) => Buffer.from(m[1]!, 'base64').toString())
              .join('\n'),
          (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
        );
      const decoded = await show(['--codec-auth', `Bearer ${world.admin.token}`]);
      expect(decoded).toContain(MARKERS.toolInput);
      expect(decoded).toContain(MARKERS.answer);
      const refused = await show(['--codec-auth', `Bearer ${user.token}`]);
      expect(refused).not.toContain(MARKERS.toolInput);
    });

    it('takes payloads larger than the API’s usual body limit (a long model conversation)', async () => {
      const big = asJson(defaultPayloadConverter.toPayload({ text: 'x'.repeat(1_500_000) }));
      const as = { token: world.admin.token };
      const encoded = await world.http.post('/api/temporal-codec/encode', { payloads: [big] }, as);
      expect(encoded.status).toBe(200);
      const decoded = await world.http.post('/api/temporal-codec/decode', encoded.body, as);
      expect(decoded.status).toBe(200);
      expect(decoded.body.payloads).toEqual([big]);
    });

    it('reads no large body before the per-address limit and an admin’s token are checked; other paths keep the small limit', async () => {
      const { http, admin } = world;
      // About 1 MiB, over the API's usual limit and under the codec's; malformed, so a parse would say so.
      const malformed = `{"payloads": [${' '.repeat(1024 * 1024)}`;
      const raw = (path: string, headers: Record<string, string> = {}) =>
        http.request('POST', path, { rawBody: malformed, headers: { 'content-type': 'application/json', ...headers } });
      // Refused before the body is parsed: the answer is about the caller, not the body.
      expectError(await raw('/api/temporal-codec/decode'), 'UNAUTHORIZED', 401);
      expectError(await raw('/api/Temporal-Codec/ENCODE/'), 'UNAUTHORIZED', 401);
      expectError(
        await raw('/api/temporal-codec/decode', { cookie: 'agentsite_codec=not.a.token' }),
        'INVALID_TOKEN',
        401,
      );
      expectError(
        await raw('/api/temporal-codec/decode', { authorization: `Bearer ${user.token}` }),
        'ADMIN_REQUIRED',
        403,
      );
      const asAdmin = await raw('/API/TEMPORAL-CODEC/DECODE', { authorization: `Bearer ${admin.token}` });
      expectError(asAdmin, 'VALIDATION_ERROR', 400);
      expect(asAdmin.body.details).toEqual([{ field: 'body', message: 'Request body is not valid JSON' }]);
      // Any other path or method under the codec's prefix has the API's usual limit, admin or not.
      const big = { payloads: [{ data: 'x'.repeat(512 * 1024) }] };
      for (const path of ['/api/temporal-codec/session', '/api/temporal-codec/decode/more', '/API/temporal-codec/x']) {
        const refused = await http.post(path, big, { token: admin.token });
        expectError(refused, 'VALIDATION_ERROR', 400);
        expect(refused.body.details).toEqual([{ field: 'body', message: 'Request body is too large' }]);
      }
      // An admin's large body on the payload routes, in any case, is read.
      const clear = asJson(defaultPayloadConverter.toPayload({ text: 'y'.repeat(400 * 1024) }));
      const decoded = await http.post('/api/Temporal-Codec/Decode', { payloads: [clear] }, { token: admin.token });
      expect(decoded.status).toBe(200);
      expect(decoded.body.payloads).toEqual([clear]);
    });

    it('is in the OpenAPI document', async () => {
      const doc = (await world.http.get('/api/docs/openapi.json')).body as { paths: Record<string, object> };
      expect(Object.keys(doc.paths['/api/temporal-codec/decode'] ?? {})).toEqual(
        expect.arrayContaining(['post', 'options']),
      );
      expect(doc.paths['/api/temporal-codec/encode']).toBeDefined();
      expect(doc.paths['/api/temporal-codec/session']).toBeDefined();
    });
  });
});
