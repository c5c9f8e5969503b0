import { describe, expect, it } from '@jest/globals';
import type { McpAuthorization } from '../../src/sites/mcp-state.js';
import { runScenario, sampleInput } from './scenarios.js';
import type { Call, ConformanceService, McpChallengeLike, Probe } from './service.js';

const AUTHORIZATION: McpAuthorization = {
  resource: 'http://localhost:1/mcp',
  resourceMetadataUrl: null,
  issuer: 'http://localhost:2',
  authorizationEndpoint: 'http://localhost:2/authorize',
  tokenEndpoint: 'http://localhost:2/token',
  revocationEndpoint: null,
  registrationEndpoint: 'http://localhost:2/register',
  clientIdMetadataDocumentSupported: false,
  issParameterSupported: false,
  codeChallengeMethods: ['S256'],
  tokenEndpointAuthMethods: null,
  scopesSupported: null,
  challengeScope: null,
};

const challenge = (status: number, scope: string | null): McpChallengeLike => ({
  status,
  resourceMetadataUrl: null,
  scope,
  error: status === 403 ? 'insufficient_scope' : null,
});

/** A server scripted by answers in order; records the scopes the command authorized with. */
class ScriptedServer implements ConformanceService {
  readonly scopes: Array<string | null> = [];
  readonly calls: string[] = [];
  constructor(
    private readonly probes: Probe[],
    private readonly answers: Call[],
    private readonly authorization: McpAuthorization | null = AUTHORIZATION,
  ) {}
  async probe(): Promise<Probe> {
    return this.probes.shift()!;
  }
  async call(_endpoint: string, token: string | null, tool: string): Promise<Call> {
    this.calls.push(`${tool} with ${token}`);
    return this.answers.shift()!;
  }
  async discover(): Promise<McpAuthorization | null> {
    return this.authorization;
  }
  async authorize(_authorization: McpAuthorization, scope: string | null): Promise<string> {
    this.scopes.push(scope);
    return `token-${this.scopes.length}`;
  }
  async close(): Promise<void> {}
}

const TOOL = { name: 'test-tool', inputSchema: { type: 'object' } };
const listed: Probe = { kind: 'tools', tools: [TOOL] };
const ok: Call = { kind: 'result', isError: false, text: '[]' };
const input = (scenario: string) => ({ url: 'http://localhost:1/mcp', scenario, context: {} });

describe('the conformance command, as the service behaves', () => {
  it('connects after a 401, and on a 403 insufficient_scope connects again once with the scope it named, then calls', async () => {
    const server = new ScriptedServer(
      [{ kind: 'unauthorized', challenge: challenge(401, 'mcp:basic') }, listed],
      [{ kind: 'unauthorized', challenge: challenge(403, 'mcp:basic mcp:write') }, ok],
    );
    await expect(runScenario(input('auth/scope-step-up'), () => undefined, server)).resolves.toBe(
      'authorized, listed 1 tool(s), stepped up, called test-tool',
    );
    // null: a first connection (the service asks the challenge's scope); then the step-up's required scope.
    expect(server.scopes).toEqual([null, 'mcp:basic mcp:write']);
    expect(server.calls).toEqual(['test-tool with token-1', 'test-tool with token-2']);
  });

  it('never loops: a second refusal after a step-up ends the command', async () => {
    const refused: Probe = { kind: 'unauthorized', challenge: challenge(403, 'mcp:admin') };
    const server = new ScriptedServer(
      [{ kind: 'unauthorized', challenge: challenge(401, 'mcp:admin') }, refused, refused, refused],
      [],
    );
    await expect(runScenario(input('auth/scope-retry-limit'), () => undefined, server)).rejects.toThrow(
      'refused the token again after a step-up (403)',
    );
    expect(server.scopes).toEqual([null, 'mcp:admin']);
  });

  it('fails when a 401 leads to no authorization server, and only lists for initialize', async () => {
    const none = new ScriptedServer([{ kind: 'unauthorized', challenge: challenge(401, null) }], [], null);
    await expect(runScenario(input('auth/metadata-default'), () => undefined, none)).rejects.toThrow(
      'without an authorization server',
    );
    const plain = new ScriptedServer([listed], []);
    await expect(runScenario(input('initialize'), () => undefined, plain)).resolves.toBe('listed 1 tool(s)');
    expect(plain.calls).toEqual([]);
  });

  it('gives each required property a value of its type', () => {
    expect(
      sampleInput({
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'string', enum: ['x', 'y'] }, c: { type: 'boolean' } },
        required: ['a', 'b', 'c'],
      }),
    ).toEqual({ a: 2, b: 'x', c: true });
  });
});
