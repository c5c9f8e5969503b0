import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '../../src/common/error-codes.js';
import { startEmbeddedPostgres } from '../../scripts/runtime/postgres.js';
import { freePort, stopChild } from '../../scripts/runtime/processes.js';
import { startTemporalDevServer } from '../../scripts/runtime/temporal.js';
import { FakeModel } from '../fixtures/fake-model.js';
import { testEnv } from '../setup/shared-runtime.js';
import { registerAdmin } from '../utils/admin.js';
import { expectError, Http, type HttpAnswer, rawRequest } from '../utils/http.js';
import {
  BAD_SEGMENTS,
  casesOf,
  type OpenApiDocument,
  pathParameters,
  type SweepCase,
  validValue,
} from '../utils/openapi-sweep.js';
import { siteEnv, testSites, type TestSites } from '../utils/site.js';
import { eventually, waitForRun } from '../utils/runs.js';
import { Stack } from '../utils/stack.js';
import { registerUser, type TestUser, uniqueEmail } from '../utils/users.js';
import { joinWorkspace } from '../utils/workspaces.js';

const LISTED = new Set<string>(ERROR_CODES);

/** A webhook agent of a harness-tier user with plenty of credits. */
async function webhookAgent(http: Http, admin: TestUser) {
  const user = await registerUser(http);
  await http.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 100_000 }, { token: admin.token });
  const agent = await http.post(
    '/api/agents',
    {
      name: 'faulty',
      systemPrompt: 'p',
      siteIds: [],
      trigger: { type: 'webhook', schema: [{ name: 'n', type: 'integer' }] },
    },
    { token: user.token },
  );
  return { user, agent: agent.body as { id: string; webhookSecret: string } };
}

describe('fault suite: hostile input', () => {
  let stack: Stack;
  let http: Http;
  let admin: TestUser;
  let model: FakeModel;
  let sites: TestSites;
  let siteUrl: string;

  beforeAll(async () => {
    model = await FakeModel.start();
    sites = await testSites();
    const site = await sites.start();
    siteUrl = site.url;
    stack = await Stack.start({
      env: { ...siteEnv(sites, [site]), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: model.url },
    });
    http = new Http(stack.baseUrl);
    admin = await registerAdmin(http, stack);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.stop();
    await sites?.stopAll();
  });

  it('1 MB and deeply nested webhook bodies, invalid UTF-8 and wrong content types: 4xx, nothing started', async () => {
    const { user, agent } = await webhookAgent(http, admin);
    const send = (rawBody: string | Buffer, contentType: string) =>
      http.request('POST', `/api/webhooks/agent/${agent.id}`, {
        rawBody,
        headers: { 'content-type': contentType, 'x-webhook-secret': agent.webhookSecret },
      });
    const huge = await send(JSON.stringify({ n: 1, blob: 'x'.repeat(1024 * 1024) }), 'application/json');
    expectError(huge, 'WEBHOOK_PAYLOAD_INVALID', 422);
    const deepArray = await send(`{"n":1,"d":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, 'application/json');
    expect([400, 422]).toContain(deepArray.status);
    expect(LISTED.has(deepArray.body.code)).toBe(true);
    let nested = '1';
    for (let i = 0; i < 200; i += 1) {
      nested = `{"a":${nested}}`;
    }
    expectError(await send(`{"n":1,"d":${nested}}`, 'application/json'), 'WEBHOOK_PAYLOAD_INVALID', 422);
    const invalidUtf8 = Buffer.concat([
      Buffer.from('{"n":1,"s":"'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}'),
    ]);
    expectError(await send(invalidUtf8, 'application/json'), 'WEBHOOK_PAYLOAD_INVALID', 422);
    for (const type of [
      'text/plain',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
    ]) {
      const res = await send('n=1', type);
      expectError(res, 'WEBHOOK_PAYLOAD_INVALID', 422);
    }
    expectError(await send('{"n":1', 'application/json'), 'WEBHOOK_PAYLOAD_INVALID', 422);
    expect((await http.get(`/api/agents/${agent.id}/runs`, { token: user.token })).body.items).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });

  it('a randomised bad-input sweep over every route: no 500, no stack trace, only listed codes', async () => {
    const user = await registerUser(http);
    const doc = (await http.get('/api/docs/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    // Logging out would only make the rest of the sweep answer TOKEN_REVOKED.
    const skip = new Set(['/api/auth/logout', '/api/auth/logout-all']);
    const routes = Object.entries(doc.paths)
      .filter(([p]) => !skip.has(p))
      .flatMap(([p, methods]) => Object.keys(methods).map((method) => ({ path: p, method: method.toUpperCase() })));
    expect(routes.length).toBeGreaterThan(40);
    const segment = fc.oneof(
      fc.uuid(),
      fc.string({ maxLength: 40 }),
      fc.constantFrom('%00', '..', '%2e%2e%2f', "' OR 1=1 --", 'ses_' + 'A'.repeat(43), '-1', '9'.repeat(40), '%FF%FE'),
    );
    const body = fc.oneof(
      fc.anything({ maxDepth: 4 }),
      fc.dictionary(
        fc.constantFrom(
          'url',
          'email',
          'password',
          'token',
          'input',
          'content',
          'sites',
          'tier',
          'name',
          'trigger',
          'siteIds',
          'amount',
          'role',
          'userId',
          'tools',
        ),
        fc.anything({ maxDepth: 3 }),
      ),
      fc.string(),
    );
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.array(segment, { minLength: 3, maxLength: 3 }),
        body,
        fc.boolean(),
        async (route, segments, payload, asText) => {
          let i = 0;
          const url = route.path.replace(/\{[^}]+\}/g, () =>
            encodeURIComponent(String(segments[i++ % 3])).replace(/%25/g, '%'),
          );
          const options = asText
            ? {
                token: user.token,
                rawBody: typeof payload === 'string' ? payload : '{"truncated": ',
                headers: { 'content-type': 'application/json' },
              }
            : { token: user.token, body: payload === undefined ? {} : payload };
          const res = await http.request(
            route.method,
            url,
            route.method === 'GET' || route.method === 'DELETE' ? { token: user.token } : options,
          );
          requests += 1;
          const where = `${route.method} ${url} -> ${res.status} ${res.text.slice(0, 300)}`;
          if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) {
            throw new Error(`server error: ${where}`);
          }
          if (/\bat .+\.(js|ts):\d+/.test(res.text)) {
            throw new Error(`stack trace: ${where}`);
          }
          if (
            res.status >= 400 &&
            res.headers.get('content-type')?.includes('application/json') &&
            !LISTED.has(res.body?.code)
          ) {
            throw new Error(`unlisted code: ${where}`);
          }
        },
      ),
      { numRuns: 600, seed: 20261121, endOnFailure: true },
    );
    expect(requests).toBe(600);
  });

  /**
   * The fixtures the sweeps name in valid parts of bodies and paths: a Team owner with a site, an agent
   * and a workspace, and a second user who is a member of it. Real ids, so values that pass validation
   * reach the services and the database.
   */
  async function sweepFixtures(label: string) {
    const owner = await registerUser(http, { email: uniqueEmail(`${label}-owner`) });
    const member = await registerUser(http, { email: uniqueEmail(`${label}-member`) });
    await http.patch(`/api/admin/users/${owner.id}`, { tier: 'team', credits: 1_000_000 }, { token: admin.token });
    const asOwner = { token: owner.token };
    const siteId = (await http.post('/api/vault/sites', { url: siteUrl }, asOwner)).body.id as string;
    const tool = (await http.get(`/api/vault/sites/${siteId}`, asOwner)).body.tools[0].name as string;
    const agentId = (
      await http.post(
        '/api/agents',
        { name: label, systemPrompt: 'p', siteIds: [siteId], trigger: { type: 'manual' } },
        asOwner,
      )
    ).body.id as string;
    const workspaceId = (await http.post('/api/workspaces', { name: label }, asOwner)).body.id as string;
    await joinWorkspace(http, workspaceId, owner.token, member, 'member');
    return { owner, member, asOwner, siteId, tool, agentId, workspaceId };
  }

  it('a schema-driven sweep: null, every JSON type and boundary values in every field of every route', async () => {
    const doc = (await http.get('/api/docs/openapi.json')).body as OpenApiDocument;
    const { owner, member: victim, asOwner, siteId, tool, agentId, workspaceId } = await sweepFixtures('sweep');
    const session = (await http.post('/api/sessions', { sites: [{ siteId }] }, asOwner)).body.token as string;
    const pathValues: Record<string, string> = { tool, token: session, userId: victim.id };
    const idOf = (route: string): string =>
      route.startsWith('/api/admin/users')
        ? victim.id
        : route.startsWith('/api/vault/sites')
          ? siteId
          : route.startsWith('/api/agents')
            ? agentId
            : route.startsWith('/api/workspaces')
              ? workspaceId
              : '00000000-0000-4000-8000-000000000000';
    const byName: Record<string, unknown> = {
      siteId,
      siteIds: [siteId],
      userId: victim.id,
      // Fails fast (a private address), instead of fetching a manifest from the internet.
      url: 'https://127.0.0.1:1/',
    };
    const values = { byName: (_route: string, name: string) => byName[name] };
    // Logging out would only make the rest of the sweep answer TOKEN_REVOKED.
    const skip = new Set(['/api/auth/logout', '/api/auth/logout-all']);
    const cases = Object.entries(doc.paths)
      .filter(([route]) => !skip.has(route))
      .flatMap(([route, methods]) => Object.keys(methods).flatMap((method) => casesOf(doc, route, method, values)));
    // Every route with a body or a query, every field of it, and null for each of them.
    expect(new Set(cases.map((c) => `${c.method} ${c.route}`)).size).toBeGreaterThanOrEqual(25);
    expect(cases.filter((c) => c.value === null).length).toBeGreaterThan(60);
    expect(cases.length).toBeLessThan(2500);

    const problems: string[] = [];
    const started = Date.now();
    const run = async (c: SweepCase): Promise<void> => {
      const url =
        c.route.replace(/\{([^}]+)\}/g, (_m, name: string) =>
          encodeURIComponent(name === 'id' ? idOf(c.route) : (pathValues[name] ?? name)),
        ) + (c.query ? `?${new URLSearchParams(c.query).toString()}` : '');
      const res = await http.request(c.method.toUpperCase(), url, {
        // Admin routes, and the Temporal codec (admins only), with the admin's token: their fields are checked after it.
        token:
          c.route.startsWith('/api/admin/') || c.route.startsWith('/api/temporal-codec/') ? admin.token : owner.token,
        ...(c.body !== undefined ? { body: c.body } : {}),
      });
      const problem = sweepProblem(c, res);
      if (problem !== undefined) {
        const shown = JSON.stringify(c.value)?.slice(0, 60);
        problems.push(
          `${c.method.toUpperCase()} ${c.route} ${c.field}=${shown}: ${problem} (${res.status} ${res.text.slice(0, 200)})`,
        );
      }
    };
    // A few requests at a time: the whole sweep stays well under a minute.
    const queue = [...cases];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
          await run(c);
        }
      }),
    );
    console.log(`schema-driven sweep: ${cases.length} requests in ${Date.now() - started} ms`);
    expect(problems).toEqual([]);
  });

  it("route parameters and headers: every bad id and header answers its route's own code", async () => {
    const doc = (await http.get('/api/docs/openapi.json')).body as OpenApiDocument;
    const { owner, member: stranger, asOwner, siteId, tool, agentId, workspaceId } = await sweepFixtures('params');
    await http.patch(`/api/admin/users/${stranger.id}`, { tier: 'team' }, { token: admin.token });
    const strangersWorkspace = (await http.post('/api/workspaces', { name: 'other' }, { token: stranger.token })).body
      .id as string;
    // A pending invitation of the owner's workspace, for the routes that name one beside the workspace.
    const invitationId = (
      await http.post(
        `/api/workspaces/${workspaceId}/members`,
        { email: uniqueEmail('invited'), role: 'viewer' },
        asOwner,
      )
    ).body.id as string;
    // A run of the owner's, for the routes that name one beside another parameter (its approvals).
    const runId = (await http.post(`/api/agents/${agentId}/runs`, { input: 'x' }, asOwner)).body.id as string;
    const real: Record<string, string> = { tool, userId: stranger.id, agentId, invitationId };
    const byName: Record<string, unknown> = {
      siteId,
      siteIds: [siteId],
      userId: stranger.id,
      email: stranger.email,
      url: 'https://127.0.0.1:1/',
    };
    const values = { byName: (_route: string, name: string) => byName[name] };

    // Each path parameter's codes, as its route answers them: a malformed value names nothing (the
    // route's not-found code; a session token has its own INVALID_SESSION), and so does a well-formed
    // one that is unknown (a session is named by its token or, as GET /api/sessions lists it, its id). A parameter missing here fails the test: new routes must be added.
    const codes = (route: string, param: string): { malformed: ErrorCode; unknown: ErrorCode; wellFormed?: string } => {
      const table: Array<[RegExp, string, ErrorCode, ErrorCode, string?]> = [
        [/^\/api\/admin\/users\//, 'id', 'NOT_FOUND', 'NOT_FOUND'],
        [/^\/api\/agents\//, 'id', 'AGENT_NOT_FOUND', 'AGENT_NOT_FOUND'],
        [/^\/api\/webhooks\/agent\//, 'agentId', 'AGENT_NOT_FOUND', 'AGENT_NOT_FOUND'],
        [/^\/api\/runs\//, 'id', 'RUN_NOT_FOUND', 'RUN_NOT_FOUND'],
        // An approval is named beside its run: no such approval of this run is a bad `approvalId`.
        [/^\/api\/runs\/.*\/approvals\//, 'approvalId', 'VALIDATION_ERROR', 'VALIDATION_ERROR'],
        [/^\/api\/vault\/sites\//, 'id', 'NOT_FOUND', 'NOT_FOUND'],
        [/^\/api\/vault\/sites\/.*\/tools\//, 'tool', 'NOT_FOUND', 'NOT_FOUND'],
        [/^\/api\/workspaces\//, 'id', 'WORKSPACE_NOT_FOUND', 'WORKSPACE_NOT_FOUND'],
        [/^\/api\/workspaces\/.*\/members\//, 'userId', 'MEMBER_NOT_FOUND', 'MEMBER_NOT_FOUND'],
        [/^\/api\/workspaces\/.*\/invitations\//, 'invitationId', 'NOT_FOUND', 'NOT_FOUND'],
        [/^\/api\/invitations\//, 'id', 'NOT_FOUND', 'NOT_FOUND'],
        [/^\/api\/sessions\//, 'token', 'INVALID_SESSION', 'SESSION_NOT_FOUND', `ses_${'A'.repeat(43)}`],
        [/^\/api\/mcp-consent\//, 'uid', 'SESSION_NOT_FOUND', 'SESSION_NOT_FOUND', 'A'.repeat(43)],
        [/^\/api\/connected-apps\//, 'id', 'NOT_FOUND', 'NOT_FOUND'],
      ];
      const row = table.find(([pattern, name]) => pattern.test(route) && name === param);
      if (row === undefined) {
        throw new Error(`no expected codes for the path parameter ${param} of ${route}: add it to the table`);
      }
      return { malformed: row[2], unknown: row[3], ...(row[4] !== undefined ? { wellFormed: row[4] } : {}) };
    };
    const realId = (route: string): string =>
      route.startsWith('/api/workspaces')
        ? workspaceId
        : route.startsWith('/api/vault')
          ? siteId
          : route.startsWith('/api/runs')
            ? runId
            : agentId;

    interface Probe {
      what: string;
      method: string;
      path: string;
      headers?: Record<string, string | string[]>;
      body?: string;
      /** The code that must answer, or a success status (for an equivalent of the valid request). */
      expect: ErrorCode | number;
    }
    const probes: Probe[] = [];
    const skip = new Set(['/api/auth/logout', '/api/auth/logout-all']);
    let withParams = 0;
    for (const [route, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        const params = pathParameters(doc, route, method);
        if (params.length === 0 || skip.has(route)) {
          continue;
        }
        withParams += 1;
        const operation = doc.paths[route]![method]!;
        const schema = operation.requestBody?.content?.['application/json']?.schema;
        const body = schema === undefined ? undefined : JSON.stringify(validValue(doc, schema, route, '', values));
        const token = route.startsWith('/api/admin/') ? admin.token : owner.token;
        const headers: Record<string, string> = route.startsWith('/api/webhooks/')
          ? {}
          : { authorization: `Bearer ${token}` };
        // Sharing needs a workspace before it looks at the id (WORKSPACE_REQUIRED otherwise).
        if (route.endsWith('/share')) {
          headers['x-workspace-id'] = workspaceId;
        }
        if (body !== undefined) {
          headers['content-type'] = 'application/json';
        }
        for (const param of params) {
          const expected = codes(route, param);
          const segments = [...BAD_SEGMENTS];
          if (expected.wellFormed !== undefined) {
            segments.push({ label: 'a well-formed unknown value', raw: expected.wellFormed, wellFormed: true });
          }
          for (const segment of segments) {
            const path = route.replace(/\{([^}]+)\}/g, (_m, name: string) =>
              name === param ? segment.raw : encodeURIComponent(name === 'id' ? realId(route) : real[name]!),
            );
            probes.push({
              what: `${method.toUpperCase()} ${route} ${param}=${segment.label}`,
              method: method.toUpperCase(),
              path,
              headers,
              ...(body !== undefined ? { body } : {}),
              expect: segment.undecodable
                ? 'VALIDATION_ERROR'
                : segment.wellFormed
                  ? expected.unknown
                  : expected.malformed,
            });
          }
        }
      }
    }
    expect(withParams).toBeGreaterThanOrEqual(25);

    // X-Workspace-Id on every route that reads it (and on GET /api/me, which ignores scopes but not
    // the header): only a workspace the caller belongs to, given once, opens a scope.
    const bearer = { authorization: `Bearer ${owner.token}` };
    const scoped = Object.entries(doc.paths).flatMap(([route, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => (op.parameters ?? []).some((p) => p.in === 'header' && /^x-workspace-id$/i.test(p.name)))
        .map(([method]) => ({ route, method: method.toUpperCase() })),
    );
    expect(scoped.length).toBeGreaterThanOrEqual(15);
    const badWorkspaces: Array<[string, string | string[]]> = [
      ['not a UUID', 'not-a-uuid'],
      ['10,000 characters', LONG_HEADER],
      ['an unknown UUID', '5b0e9c1e-3a52-4d0b-9f3e-2f8b6c1d7a40'],
      ["another user's workspace", strangersWorkspace],
      ['repeated', [workspaceId, workspaceId]],
      ['repeated, the second not ours', [workspaceId, strangersWorkspace]],
      ['two ids in one line', `${workspaceId},${strangersWorkspace}`],
      ['non-ASCII', 'wörkspace-😀'],
      ['a UUID with a NUL-like escape', `${workspaceId}%00`],
    ];
    for (const { route, method } of [...scoped, { route: '/api/me', method: 'GET' }]) {
      const path = route.replace(/\{([^}]+)\}/g, (_m, name: string) =>
        encodeURIComponent(name === 'id' ? realId(route) : real[name]!),
      );
      for (const [label, value] of badWorkspaces) {
        probes.push({
          what: `${method} ${route} X-Workspace-Id=${label}`,
          method,
          path,
          headers: { ...bearer, 'x-workspace-id': value },
          expect: 'WORKSPACE_NOT_FOUND',
        });
      }
    }
    // An empty header is no header: the personal scope.
    for (const value of ['', ' ']) {
      probes.push({
        what: `GET /api/agents X-Workspace-Id=${JSON.stringify(value)}`,
        method: 'GET',
        path: '/api/agents',
        headers: { ...bearer, 'x-workspace-id': value },
        expect: 200,
      });
    }

    // X-Webhook-Secret on a real webhook agent: anything but the secret itself is WEBHOOK_SECRET_INVALID.
    const hook = await webhookAgent(http, admin);
    const secret = hook.agent.webhookSecret;
    const json = { 'content-type': 'application/json' };
    const badSecrets: Array<[string, Record<string, string | string[]>]> = [
      ['missing', {}],
      ['empty', { 'x-webhook-secret': '' }],
      ['10,000 characters', { 'x-webhook-secret': LONG_HEADER }],
      ['non-ASCII', { 'x-webhook-secret': 'sécrèt-😀' }],
      ['non-ASCII after the secret', { 'x-webhook-secret': `${secret}é` }],
      ['the secret with a suffix', { 'x-webhook-secret': `${secret}x` }],
      ['the secret cut short', { 'x-webhook-secret': secret.slice(0, -1) }],
      ['the secret in upper case', { 'x-webhook-secret': secret.toUpperCase() }],
      ['the secret repeated', { 'x-webhook-secret': [secret, secret] }],
      ['another agent secret', { 'x-webhook-secret': 'whs_' + 'A'.repeat(43) }],
    ];
    for (const [label, extra] of badSecrets) {
      probes.push({
        what: `POST /api/webhooks/agent/{agentId} X-Webhook-Secret=${label}`,
        method: 'POST',
        path: `/api/webhooks/agent/${hook.agent.id}`,
        headers: { ...json, ...extra },
        body: '{"n":1}',
        expect: 'WEBHOOK_SECRET_INVALID',
      });
    }

    // Authorization: anything but `Bearer <a token we signed>` is refused before any route runs.
    const [head, payload] = owner.token.split('.') as [string, string];
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    const badAuthorizations: Array<[string, string | string[], ErrorCode]> = [
      ['Basic credentials', `Basic ${Buffer.from('a@b.c:pw').toString('base64')}`, 'INVALID_TOKEN'],
      ['another scheme with our token', `Token ${owner.token}`, 'INVALID_TOKEN'],
      ['the token without a scheme', owner.token, 'INVALID_TOKEN'],
      ['Bearer alone', 'Bearer', 'INVALID_TOKEN'],
      ['Bearer and garbage', 'Bearer garbage', 'INVALID_TOKEN'],
      ['Bearer and three empty parts', 'Bearer ..', 'INVALID_TOKEN'],
      ['Bearer and 10,000 characters', `Bearer ${LONG_HEADER}`, 'INVALID_TOKEN'],
      ['Bearer and non-ASCII', 'Bearer tökén-😀', 'INVALID_TOKEN'],
      ['a tampered signature', `${owner.token.slice(0, -2)}AA`.replace(/^/, 'Bearer '), 'INVALID_TOKEN'],
      ['alg none', `Bearer ${unsigned}`, 'INVALID_TOKEN'],
      ['a foreign header on our payload', `Bearer ${head}x.${payload}.sig`, 'INVALID_TOKEN'],
      ['our token twice in one line', `Bearer ${owner.token} ${owner.token}`, 'INVALID_TOKEN'],
      ['garbage first, our token second', ['Bearer garbage', `Bearer ${owner.token}`], 'INVALID_TOKEN'],
      ['empty', '', 'UNAUTHORIZED'],
      ['only spaces', '   ', 'UNAUTHORIZED'],
    ];
    for (const [label, value, code] of badAuthorizations) {
      for (const path of ['/api/me', `/api/agents/${agentId}`]) {
        probes.push({
          what: `GET ${path} Authorization=${label}`,
          method: 'GET',
          path,
          headers: { authorization: value },
          expect: code,
        });
      }
    }
    // The scheme is case-insensitive (RFC 9110) and may be followed by several spaces.
    for (const value of [`bearer ${owner.token}`, `BEARER  ${owner.token}`]) {
      probes.push({
        what: `GET /api/me Authorization=${value.slice(0, 8)}…`,
        method: 'GET',
        path: '/api/me',
        headers: { authorization: value },
        expect: 200,
      });
    }

    // Content-Type on a JSON route with a required field (PATCH a member's role, the same role again):
    // JSON in any spelling is read; anything else is not, so the field is missing.
    const rolePath = `/api/workspaces/${workspaceId}/members/${stranger.id}`;
    const contentTypes: Array<[string | undefined, string, ErrorCode | number]> = [
      ['application/json', '{"role":"member"}', 200],
      ['application/json; charset=utf-8', '{"role":"member"}', 200],
      ['APPLICATION/JSON', '{"role":"member"}', 200],
      ['application/merge-patch+json', '{"role":"member"}', 200],
      ['application/json; charset=utf-16', '{"role":"member"}', 'VALIDATION_ERROR'],
      ['application/json; charset=nonsense', '{"role":"member"}', 'VALIDATION_ERROR'],
      ['application/json', 'null', 'VALIDATION_ERROR'],
      ['application/json', '[{"role":"member"}]', 'VALIDATION_ERROR'],
      ['application/json', '"member"', 'VALIDATION_ERROR'],
      ['application/json', '{"role":"member"', 'VALIDATION_ERROR'],
      ['application/json', '', 'VALIDATION_ERROR'],
      ['text/plain', '{"role":"member"}', 'VALIDATION_ERROR'],
      ['application/xml', '<role>member</role>', 'VALIDATION_ERROR'],
      [
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="role"\r\n\r\nmember\r\n--x--',
        'VALIDATION_ERROR',
      ],
      ['application/x-www-form-urlencoded', 'role=owner', 'VALIDATION_ERROR'],
      ['application/x-www-form-urlencoded', 'role[]=member', 'VALIDATION_ERROR'],
      [undefined, '{"role":"member"}', 'VALIDATION_ERROR'],
      ['', '{"role":"member"}', 'VALIDATION_ERROR'],
      ['application/json', `{"role":"${'x'.repeat(300 * 1024)}"}`, 'VALIDATION_ERROR'],
    ];
    for (const [type, body, code] of contentTypes) {
      probes.push({
        what: `PATCH /api/workspaces/{id}/members/{userId} Content-Type=${String(type)} body=${body.slice(0, 40)}`,
        method: 'PATCH',
        path: rolePath,
        headers: { ...bearer, ...(type !== undefined ? { 'content-type': type } : {}) },
        body,
        expect: code,
      });
    }
    probes.push({
      what: 'PATCH member role with Content-Encoding: gzip over plain JSON',
      method: 'PATCH',
      path: rolePath,
      headers: { ...bearer, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: '{"role":"member"}',
      expect: 'VALIDATION_ERROR',
    });

    const problems: string[] = [];
    const started = Date.now();
    const queue = [...probes];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
          const res = await rawRequest(stack.baseUrl, p.method, p.path, p.headers, p.body);
          const problem = probeProblem(p.expect, res);
          if (problem !== undefined) {
            problems.push(`${p.what}: ${problem} (${res.status} ${res.text.slice(0, 200)})`);
          }
        }
      }),
    );
    console.log(`route-parameter and header sweep: ${probes.length} requests in ${Date.now() - started} ms`);
    expect(problems).toEqual([]);
    // Nothing was acted on: the agent, the membership and the webhook agent's (empty) runs are as they were.
    expect((await http.get(`/api/agents/${agentId}`, asOwner)).status).toBe(200);
    expect((await http.get(`/api/workspaces/${workspaceId}/members`, asOwner)).body.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ userId: stranger.id, role: 'member' })]),
    );
    expect((await http.get(`/api/agents/${hook.agent.id}/runs`, { token: hook.user.token })).body.items).toEqual([]);
  });
});

const LONG_HEADER = 'h'.repeat(10_000);

/** Why an answer to a route-parameter or header probe is wrong, or undefined when it is fine. */
function probeProblem(expected: ErrorCode | number, res: HttpAnswer): string | undefined {
  if (/\bat .+\.(js|ts):\d+/.test(res.text)) {
    return 'stack trace';
  }
  if (typeof expected === 'number') {
    return res.status === expected ? undefined : `expected ${expected}`;
  }
  const body = res.body as { code?: unknown; statusCode?: unknown; error?: unknown } | undefined;
  if (
    res.status !== ERROR_STATUS[expected] ||
    body?.code !== expected ||
    body.statusCode !== res.status ||
    typeof body.error !== 'string'
  ) {
    return `expected ${ERROR_STATUS[expected]} ${expected}`;
  }
  return undefined;
}

/** Why an answer to a sweep case is wrong, or undefined when it is fine. */
function sweepProblem(c: SweepCase, res: HttpAnswer): string | undefined {
  if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) {
    return 'server error';
  }
  if (/\bat .+\.(js|ts):\d+/.test(res.text)) {
    return 'stack trace';
  }
  if (res.status >= 400 && !LISTED.has(res.body?.code)) {
    return 'unlisted code';
  }
  if (c.mustRefuse && res.body?.code !== 'RATE_LIMITED') {
    if (res.status !== 400 || res.body?.code !== 'VALIDATION_ERROR') {
      return 'accepted a value its schema refuses (expected VALIDATION_ERROR)';
    }
    const field = c.field.replace(/^(body|query)\./, '');
    const named = (res.body.details as Array<{ field: string }> | undefined)?.some(
      (d) =>
        d.field === field ||
        d.field.startsWith(`${field}.`) ||
        d.field.startsWith(`${field}[`) ||
        field.startsWith(d.field),
    );
    if (!named) {
      return `VALIDATION_ERROR does not name ${field}`;
    }
  }
  return undefined;
}

describe('fault suite: processes and servers failing', () => {
  let model: FakeModel;
  beforeAll(async () => {
    model = await FakeModel.start();
  });
  afterAll(async () => {
    await model?.stop();
  });

  it('the API killed right after a 202: the run still happens', async () => {
    const stack = await Stack.start({
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: model.url },
    });
    try {
      const http = new Http(stack.baseUrl);
      const admin = await registerAdmin(http, stack);
      const { user, agent } = await webhookAgent(http, admin);
      model.script({ text: 'survived', delayMs: 500 });
      const accepted = await http.post(
        `/api/webhooks/agent/${agent.id}`,
        { n: 1 },
        { headers: { 'x-webhook-secret': agent.webhookSecret } },
      );
      expect(accepted.status).toBe(202);
      stack.api.child.kill('SIGKILL');
      await stopChild(stack.api.child);
      stack.api = stack.spawn('api', 'src/main.js');
      await stack.waitHealthy(true);
      const run = await waitForRun(http, user.token, accepted.body.runId);
      expect(run.status).toBe('completed');
      expect(run.timeline[run.timeline.length - 1]).toMatchObject({ type: 'completed', output: 'survived' });
    } finally {
      await stack.stop();
    }
  });

  it('the Temporal server stopped and restarted mid-run: every accepted run completes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'temporal-fault-'));
    const port = await freePort();
    const options = {
      cliPath: testEnv('temporalCli'),
      port,
      namespace: 'default',
      dbFile: path.join(dir, 'temporal.sqlite'),
      logFile: path.join(dir, 'temporal.log'),
    };
    let temporal = await startTemporalDevServer(options);
    const stack = await Stack.start({
      env: {
        ANTHROPIC_API_KEY: 'k',
        ANTHROPIC_BASE_URL: model.url,
        TEMPORAL_ADDRESS: temporal.address,
      },
    });
    try {
      const http = new Http(stack.baseUrl);
      const admin = await registerAdmin(http, stack);
      const { user, agent } = await webhookAgent(http, admin);
      model.fallback = { text: 'done after restart', delayMs: 300 };
      const accepted: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await http.post(
          `/api/webhooks/agent/${agent.id}`,
          { n: i },
          { headers: { 'x-webhook-secret': agent.webhookSecret } },
        );
        expect(res.status).toBe(202);
        accepted.push(res.body.runId as string);
      }
      await eventually('a run to be active', async () =>
        (await http.get(`/api/runs/${accepted[0]}`, { token: user.token })).body.status !== 'queued' ? true : undefined,
      );
      await temporal.stop();
      temporal = await startTemporalDevServer(options);
      for (const runId of accepted) {
        const run = await waitForRun(http, user.token, runId, undefined, 120_000);
        expect(run.status).toBe('completed');
      }
    } finally {
      model.fallback = { text: 'Done.', stopReason: 'end_turn' };
      await stack.stop();
      await temporal.stop();
    }
  });

  it('PostgreSQL restarted mid-run: the API answers errors (no hang) while it is down, and the run resumes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pg-fault-'));
    chmodSync(dir, 0o755);
    const port = await freePort();
    let postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port, fast: true });
    const stack = await Stack.start({
      env: {
        ANTHROPIC_API_KEY: 'k',
        ANTHROPIC_BASE_URL: model.url,
        DATABASE_URL: postgres.url,
      },
    });
    try {
      const http = new Http(stack.baseUrl);
      const admin = await registerAdmin(http, stack);
      const { user, agent } = await webhookAgent(http, admin);
      model.script({ text: 'finished after the database came back', delayMs: 3000 });
      const accepted = await http.post(
        `/api/webhooks/agent/${agent.id}`,
        { n: 1 },
        { headers: { 'x-webhook-secret': agent.webhookSecret } },
      );
      expect(accepted.status).toBe(202);
      await eventually('the model to be called', async () => (model.requests.length > 0 ? true : undefined));
      await postgres.stop();
      const started = Date.now();
      const during = await http.get('/api/me', { token: user.token });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(during.status).toBeGreaterThanOrEqual(500);
      expect(typeof during.body.error).toBe('string');
      expect(during.text).not.toMatch(/\bat .+\.(js|ts):\d+/);
      const correlationId = `pg-down-${Date.now()}-probe`;
      const health = await http.get('/api/health', { headers: { 'x-correlation-id': correlationId } });
      expect(health.status).toBe(503);
      // Public and unlimited: a generic reason only; the driver's error is in the log, by correlation id.
      expect(health.body.database).toMatchObject({ status: 'down', error: 'database unavailable' });
      expect(health.text).not.toMatch(/ECONNREFUSED|terminat|\d+\.\d+\.\d+\.\d+|:\d{4,5}\b/);
      // The API's log reaches the test through a pipe, a moment after the answer: waited for.
      const logged = await eventually("the health check's log line", async () =>
        stack
          .logs()
          .split('\n')
          .find((line) => line.includes(correlationId) && line.includes('database is down')),
      );
      expect(logged).toMatch(/database is down: \S+/);
      postgres = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port, fast: true });
      const run = await waitForRun(http, user.token, accepted.body.runId, undefined, 120_000);
      expect(run.status).toBe('completed');
      expect(run.timeline[run.timeline.length - 1]).toMatchObject({
        type: 'completed',
        output: 'finished after the database came back',
      });
    } finally {
      await stack.stop();
      await postgres.stop();
    }
  });
});
