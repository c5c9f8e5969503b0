import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ContractRecorder } from '../setup/contract-recorder.js';
import { failureMessage } from '../setup/contract-recorder.js';
import { type Answer, Contract, type ContractDocument, contractMode, fails } from './contract.js';
import { rawRequest } from './http.js';

/** A tiny hand-built document in the shape @nestjs/swagger writes (OpenAPI 3.0, `nullable`, `allOf`). */
const DOC: ContractDocument = {
  paths: {
    '/api/agents': {
      get: {
        responses: {
          '200': {
            description: 'the agents',
            content: {
              'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Agent' } } },
            },
          },
        },
      },
      post: { responses: { '201': { description: 'created' } } },
    },
    '/api/agents/templates': {
      get: {
        responses: {
          '200': {
            description: 'templates',
            content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } },
          },
        },
      },
    },
    '/api/agents/{id}': {
      get: {
        responses: {
          '200': {
            description: 'one agent',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/AgentDetail' } } },
          },
          '404': {
            description: 'not found',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
          },
        },
      },
      delete: { responses: { '204': { description: 'deleted' } } },
    },
    '/api/agents/{id}/events': {
      get: {
        responses: {
          '200': { description: 'events', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        },
      },
    },
    '/api/oauth/callback': {
      get: { responses: { '302': { description: 'back to the console' } } },
    },
  },
  components: {
    schemas: {
      Agent: {
        type: 'object',
        required: ['id', 'name', 'schedule'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          name: { type: 'string' },
          schedule: { type: 'string', nullable: true },
          trigger: { type: 'string', enum: ['manual', 'cron'], nullable: true },
          settings: { type: 'object', example: { anything: 'goes' } },
          owner: { nullable: true, allOf: [{ $ref: '#/components/schemas/Owner' }] },
        },
      },
      Owner: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
      AgentDetail: {
        allOf: [
          { $ref: '#/components/schemas/Agent' },
          { type: 'object', required: ['runs'], properties: { runs: { type: 'integer', minimum: 0 } } },
        ],
      },
      ErrorBody: {
        type: 'object',
        required: ['error', 'code', 'statusCode'],
        properties: { error: { type: 'string' }, code: { type: 'string' }, statusCode: { type: 'integer' } },
      },
    },
  },
};

const ID = '5b0e9c1e-3a52-4d0b-9f3e-2f8b6c1d7a40';
const AGENT = { id: ID, name: 'a', schedule: null, trigger: 'cron', settings: { free: [1] }, owner: null };
const contract = new Contract(DOC);

function answer(
  method: string,
  path: string,
  status: number,
  body?: unknown,
  contentType = 'application/json',
): Answer {
  return {
    method,
    path,
    status,
    contentType: body === undefined ? undefined : contentType,
    text: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
  };
}

describe('the response contract check', () => {
  it('passes answers that conform, nullable fields, free objects and composed schemas included', () => {
    const ok = [
      answer('GET', '/api/agents?limit=5', 200, [AGENT, { ...AGENT, owner: { email: 'o@x' }, trigger: null }]),
      answer('GET', `/api/agents/${ID}`, 200, { ...AGENT, runs: 3 }),
      answer('GET', `/api/agents/${ID}`, 404, { error: 'No agent', code: 'AGENT_NOT_FOUND', statusCode: 404 }),
      answer('GET', '/api/agents/templates', 200, ['x']),
      // Express routes case-insensitively, trailing slash allowed: so does the check.
      answer('GET', `/API/Agents/${ID}/`, 404, { error: 'No agent', code: 'AGENT_NOT_FOUND', statusCode: 404 }),
      answer('POST', '/api/agents', 201),
      answer('DELETE', `/api/agents/${ID}`, 204),
      {
        method: 'GET',
        path: `/api/agents/${ID}/events`,
        status: 200,
        contentType: 'text/event-stream',
        text: undefined,
      },
      answer('GET', '/api/oauth/callback?code=x', 302, 'Found. Redirecting to /', 'text/plain; charset=utf-8'),
      answer('GET', '/api/nothing-here', 404, { error: 'No route', code: 'NOT_FOUND', statusCode: 404 }),
      answer('POST', '/api/agents//runs', 400, {
        error: 'Bad path',
        code: 'VALIDATION_ERROR',
        statusCode: 400,
        details: [{ field: 'path', message: 'empty segment' }],
      }),
    ];
    for (const one of ok) {
      const finding = contract.check(one);
      expect([finding.verdict, finding.message]).toEqual([expect.stringMatching(/^(ok|excluded)$/), '']);
    }
    expect(contract.check(answer('GET', '/api/docs/openapi.json', 200, DOC)).verdict).toBe('excluded');
    expect(contract.check(answer('GET', '/', 200, '<html>', 'text/html')).verdict).toBe('excluded');
  });

  it('reports a wrong type, a missing required field and an undocumented property as violations', () => {
    const wrongType = contract.check(answer('GET', '/api/agents', 200, [{ ...AGENT, name: 5 }]));
    expect(wrongType).toEqual({
      verdict: 'violation',
      key: 'GET /api/agents 200',
      message: expect.stringContaining('/0/name must be string'),
    });
    const { runs: _runs, ...missing } = { ...AGENT, runs: 1 };
    const missingField = contract.check(answer('GET', `/api/agents/${ID}`, 200, missing));
    expect(missingField.verdict).toBe('violation');
    expect(missingField.message).toContain("must have required property 'runs'");
    // allOf closes at the composition: the parts' own properties pass, an undocumented one does not.
    const extra = contract.check(answer('GET', `/api/agents/${ID}`, 200, { ...AGENT, runs: 1, secret: 'x' }));
    expect(extra.verdict).toBe('violation');
    expect(extra.message).toContain('(secret)');
    const nested = contract.check(
      answer('GET', '/api/agents', 200, [{ ...AGENT, owner: { email: 'e', password: 'p' } }]),
    );
    expect(nested.message).toContain('/0/owner');
    expect(contract.check(answer('GET', '/api/agents', 200, [{ ...AGENT, trigger: 'webhook' }])).verdict).toBe(
      'violation',
    );
    expect(contract.check(answer('GET', '/api/agents', 200, [{ ...AGENT, id: 'not-a-uuid' }])).verdict).toBe(
      'violation',
    );
  });

  it('reports a wrong content type, a non-JSON body and an unknown operation as violations', () => {
    expect(contract.check(answer('GET', '/api/agents', 200, '[]', 'text/html')).message).toContain(
      'content type text/html is not among the declared application/json',
    );
    expect(contract.check(answer('GET', '/api/agents', 200, 'not json', 'application/json')).message).toContain(
      'not JSON',
    );
    expect(contract.check(answer('PUT', '/api/agents', 200, {}))).toEqual({
      verdict: 'violation',
      key: 'PUT /api/agents 200',
      message: 'the document has no operation PUT /api/agents',
    });
    // A success where the document has no operation is drift; a refusal there still answers the error body.
    expect(contract.check(answer('GET', '/api/agents/x/y', 200, {})).verdict).toBe('violation');
    expect(contract.check(answer('GET', '/api/nothing', 404, { error: 'x' })).verdict).toBe('violation');
    // An OPTIONS that no route takes: only a CORS preflight (204, empty) is the browser's protocol.
    expect(contract.check(answer('OPTIONS', '/api/agents', 200, {})).verdict).toBe('violation');
  });

  it('leaves CORS preflights out of the contract: the CORS middleware answers them, not an operation', () => {
    const preflight = { method: 'OPTIONS', path: `/api/agents/${ID}`, status: 204, contentType: undefined, text: '' };
    expect(contract.check(preflight)).toEqual({
      verdict: 'excluded',
      key: 'OPTIONS (CORS preflight) 204',
      message: 'a CORS preflight',
    });
  });

  it('reports an undocumented status and a body without a declared schema as undeclared', () => {
    const status = contract.check(
      answer('GET', `/api/agents/${ID}`, 400, { error: 'x', code: 'VALIDATION_ERROR', statusCode: 400 }),
    );
    expect(status).toEqual({
      verdict: 'undeclared',
      key: 'GET /api/agents/{id} 400',
      message: 'status 400 is not in the document (it lists 200, 404)',
    });
    const noSchema = contract.check(answer('POST', '/api/agents', 201, { id: ID }));
    expect(noSchema).toEqual({
      verdict: 'undeclared',
      key: 'POST /api/agents 201',
      message: 'no content declared for status 201',
    });
  });

  it('fails undeclared answers in strict mode only, the default; violations always', () => {
    const undeclared = contract.check(
      answer('GET', `/api/agents/${ID}`, 500, { error: 'x', code: 'INTERNAL', statusCode: 500 }),
    );
    const violation = contract.check(answer('GET', '/api/agents', 200, {}));
    expect(contractMode({})).toBe('strict');
    expect(contractMode({ CONTRACT_CHECK: 'declared-only' })).toBe('declared-only');
    expect(() => contractMode({ CONTRACT_CHECK: 'off' })).toThrow('CONTRACT_CHECK must be');
    expect([fails(undeclared, 'strict'), fails(undeclared, 'declared-only')]).toEqual([true, false]);
    expect([fails(violation, 'strict'), fails(violation, 'declared-only')]).toEqual([true, true]);
  });
});

describe('the recorder (test/setup/contract-setup.ts, installed in every test file)', () => {
  let server: Server;
  let baseUrl: string;
  const recorder = (globalThis as { __agentsiteContract?: ContractRecorder }).__agentsiteContract!;

  beforeAll(async () => {
    // A stand-in service: the fixture document, one wrong answer, and a server of another kind.
    server = createServer((req, res) => {
      if (req.url === '/not-the-service') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"anything":true}');
        return;
      }
      res.setHeader('x-correlation-id', 'contract-spec-0001');
      const body = req.url === '/api/docs/openapi.json' ? DOC : [{ ...AGENT, name: 5 }];
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("checks the service's answers received through fetch and rawRequest against the document it serves", async () => {
    expect(recorder).toBeDefined();
    await recorder.flush();
    await fetch(`${baseUrl}/api/agents`);
    await rawRequest(baseUrl, 'GET', '/api/agents');
    await fetch(`${baseUrl}/not-the-service`);
    // Taken here, so this test's afterEach does not fail on the wrong answers it made on purpose.
    const findings = await recorder.flush();
    expect(findings.map((f) => [f.verdict, f.key])).toEqual([
      ['violation', 'GET /api/agents 200'],
      ['violation', 'GET /api/agents 200'],
    ]);
    // A service gone before its document was read: counted as unchecked, not failed.
    recorder.observe('http://127.0.0.1:1', answer('GET', '/api/agents', 200, []));
    const gone = await recorder.flush();
    expect(gone.map((f) => f.verdict)).toEqual(['unchecked']);
    expect(failureMessage(gone, 'strict')).toBeUndefined();
    expect(failureMessage(findings, 'declared-only')).toContain(
      'violation: GET /api/agents 200 (×2): the body breaks the schema: /0/name must be string',
    );
  });
});
