import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { registerAdmin } from '../utils/admin.js';
import { expectError, Http, type HttpAnswer } from '../utils/http.js';
import { Stack } from '../utils/stack.js';
import { registerUser, TEST_PASSWORD, type TestUser, uniqueEmail } from '../utils/users.js';

/**
 * What the OpenAPI document declares invalid, the server refuses (400 and the error body, or the
 * documented code of the parameter), and what it declares valid, the server takes: for a sample of
 * operations, each value is first judged by the served document's own schema (Ajv), then sent.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** OpenAPI 3.0's `nullable` as JSON Schema (a `null` type), so Ajv reads the document's schemas. */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(jsonSchema);
  }
  if (typeof node !== 'object' || node === null) {
    return node;
  }
  const { nullable, example: _example, ...rest } = node as Schema;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, jsonSchema(v)]));
  if (nullable !== true) {
    return out;
  }
  return typeof out.type === 'string' ? { ...out, type: [out.type, 'null'] } : { anyOf: [out, { type: 'null' }] };
}

describe('the OpenAPI document says what the server refuses (e2e)', () => {
  let stack: Stack;
  let http: Http;
  let doc: Doc;
  let ajv: Ajv;
  let user: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    stack = await Stack.start({ worker: false });
    http = new Http(stack.baseUrl);
    doc = (await http.get('/api/docs/openapi.json')).body as Doc;
    ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    ajv.addSchema(jsonSchema({ components: doc.components }) as Schema, 'doc');
    user = await registerUser(http);
    admin = await registerAdmin(http, stack);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const operation = (method: string, path: string): Operation => {
    const op = doc.paths[path]?.[method];
    expect(op).toBeDefined();
    return op!;
  };

  /** The document's judgement of a body: valid or not by the operation's request schema. */
  const bodyValid = (method: string, path: string, body: unknown, type = 'application/json'): boolean => {
    const schema = operation(method, path).requestBody!.content[type]!.schema;
    const validate: ValidateFunction = ajv.compile({
      $ref: `doc#/components/schemas/${String(schema.$ref).split('/').pop()}`,
    });
    return validate(body);
  };

  /** The document's judgement of a parameter's value. */
  const parameterValid = (method: string, path: string, name: string, value: unknown): boolean => {
    const parameter = operation(method, path).parameters!.find((p) => p.name === name)!;
    return ajv.compile(jsonSchema(parameter.schema) as Schema)(value);
  };

  /** A refusal the operation documents: its status is declared and the answer is the error body. */
  const expectRefused = (method: string, path: string, answer: HttpAnswer, code: string, status: number): void => {
    expect(Object.keys(operation(method, path).responses)).toContain(String(status));
    expectError(answer, code, status);
  };

  it('request bodies: an unknown property is declared invalid and refused, the same body without it is taken', async () => {
    const email = uniqueEmail('closed');
    const valid = { email, password: TEST_PASSWORD };
    const invalid = { ...valid, role: 'admin' };
    expect(bodyValid('post', '/api/auth/register', invalid)).toBe(false);
    expect(bodyValid('post', '/api/auth/register', valid)).toBe(true);
    const refused = await http.post('/api/auth/register', invalid);
    expectRefused('post', '/api/auth/register', refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'role' })]));
    expect((await http.post('/api/auth/register', valid)).status).toBe(201);

    // Workspaces are a team plan's.
    await http.patch(`/api/admin/users/${user.id}`, { tier: 'team' }, { token: admin.token });
    const workspace = { name: 'Closed bodies' };
    expect(bodyValid('post', '/api/workspaces', { ...workspace, plan: 'team' })).toBe(false);
    expect(bodyValid('post', '/api/workspaces', workspace)).toBe(true);
    expectRefused(
      'post',
      '/api/workspaces',
      await http.post('/api/workspaces', { ...workspace, plan: 'team' }, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expect((await http.post('/api/workspaces', workspace, { token: user.token })).status).toBe(201);
  });

  it('nested request objects are closed too: an unknown property in an agent trigger or a codec payload is refused', async () => {
    const agent = { name: 'Nested', systemPrompt: 'Do it.', siteIds: [], trigger: { type: 'manual', every: '1h' } };
    expect(bodyValid('post', '/api/agents', agent)).toBe(false);
    expect(bodyValid('post', '/api/agents', { ...agent, trigger: { type: 'manual' } })).toBe(true);
    const refused = await http.post('/api/agents', agent, { token: user.token });
    expectRefused('post', '/api/agents', refused, 'VALIDATION_ERROR', 400);
    expect(refused.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'trigger.every' })]));

    const payloads = { payloads: [{ data: 'aGk=', kind: 'x' }] };
    expect(bodyValid('post', '/api/temporal-codec/encode', payloads)).toBe(false);
    expectRefused(
      'post',
      '/api/temporal-codec/encode',
      await http.post('/api/temporal-codec/encode', payloads, { token: admin.token }),
      'VALIDATION_ERROR',
      400,
    );
  });

  it('the codec sign-in form: a token that is not a JWT, or an unknown field, is declared invalid and refused; an admin token is taken', async () => {
    const path = '/api/temporal-codec/session';
    const form = 'application/x-www-form-urlencoded';
    const send = (fields: Record<string, string>) =>
      http.request('POST', path, {
        rawBody: new URLSearchParams(fields).toString(),
        headers: { 'content-type': form, authorization: `Bearer ${admin.token}` },
      });
    expect(bodyValid('post', path, { token: admin.token, remember: 'yes' }, form)).toBe(false);
    expectRefused('post', path, await send({ token: admin.token, remember: 'yes' }), 'VALIDATION_ERROR', 400);
    expect(bodyValid('post', path, { token: admin.token }, form)).toBe(true);
    const taken = await send({ token: admin.token });
    expect(taken.status).toBe(200);
    expect(taken.headers.get('set-cookie')).toMatch(/^agentsite_codec=/);
  });

  it('query parameters: limits are integers from 1 to 200, cursors of the declared pattern', async () => {
    const agents = '/api/agents';
    for (const limit of ['1.5', '0', '201']) {
      expect(parameterValid('get', agents, 'limit', Number(limit))).toBe(false);
      expectRefused(
        'get',
        agents,
        await http.get(`${agents}?limit=${limit}`, { token: user.token }),
        'VALIDATION_ERROR',
        400,
      );
    }
    expect(parameterValid('get', agents, 'limit', 2)).toBe(true);
    expect((await http.get(`${agents}?limit=2`, { token: user.token })).status).toBe(200);

    const keyset = `${Date.now()}.${randomUUID()}`;
    for (const cursor of ['nope', Buffer.from(`${new Date().toISOString()}|${randomUUID()}`).toString('base64url')]) {
      expect(parameterValid('get', agents, 'cursor', cursor)).toBe(false);
      expectRefused(
        'get',
        agents,
        await http.get(`${agents}?cursor=${cursor}`, { token: user.token }),
        'VALIDATION_ERROR',
        400,
      );
    }
    expect(parameterValid('get', agents, 'cursor', keyset)).toBe(true);
    expect((await http.get(`${agents}?cursor=${keyset}`, { token: user.token })).status).toBe(200);

    // The ledger pages by entry id: a keyset cursor is not one of its cursors.
    const ledger = '/api/billing/ledger';
    expect(parameterValid('get', ledger, 'cursor', keyset)).toBe(false);
    expectRefused(
      'get',
      ledger,
      await http.get(`${ledger}?cursor=${keyset}`, { token: user.token }),
      'VALIDATION_ERROR',
      400,
    );
    expect(parameterValid('get', ledger, 'cursor', '12345')).toBe(true);
    expect((await http.get(`${ledger}?cursor=12345`, { token: user.token })).status).toBe(200);
  });

  it('path parameters: a session token of the wrong shape is INVALID_SESSION, one of the declared shape is looked up', async () => {
    const path = '/api/sessions/{token}';
    expect(parameterValid('get', path, 'token', 'ses_short')).toBe(false);
    expectRefused(
      'get',
      path,
      await http.get('/api/sessions/ses_short', { token: user.token }),
      'INVALID_SESSION',
      400,
    );
    const shaped = `ses_${randomBytes(32).toString('base64url')}`;
    expect(parameterValid('get', path, 'token', shaped)).toBe(true);
    expectRefused(
      'get',
      path,
      await http.get(`/api/sessions/${shaped}`, { token: user.token }),
      'SESSION_NOT_FOUND',
      404,
    );
    const id = randomUUID();
    expect(parameterValid('get', path, 'token', id)).toBe(true);
    expectRefused('get', path, await http.get(`/api/sessions/${id}`, { token: user.token }), 'SESSION_NOT_FOUND', 404);
  });

  it('path ids are UUIDs: any other value names nothing (the declared not-found answer)', async () => {
    const path = '/api/agents/{id}';
    expect(parameterValid('get', path, 'id', 'not-a-uuid')).toBe(false);
    expect(parameterValid('get', path, 'id', randomUUID())).toBe(true);
    expectRefused('get', path, await http.get('/api/agents/not-a-uuid', { token: user.token }), 'AGENT_NOT_FOUND', 404);
  });
});
