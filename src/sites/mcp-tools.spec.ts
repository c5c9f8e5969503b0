import { describe, expect, it } from '@jest/globals';
import { type AppError } from '../common/app-error.js';
import type { McpAuthorization } from './mcp-state.js';
import { MCP_MAX_SCHEMA_BYTES, mapMcpTools, mcpManifest, scopeOfAnnotations, siteStatus } from './mcp-tools.js';

function refusal(tools: unknown[]): AppError {
  try {
    mapMcpTools(tools);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('the list was accepted');
}

const echo = {
  name: 'echo',
  title: 'Echo Tool',
  description: 'Echoes back the input string',
  inputSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { message: { type: 'string' } },
    required: ['message'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false, unknownHint: 'x' },
};

describe('MCP tool lists', () => {
  it('maps a tool with its title, annotations, whole schema and the scope its annotations give', () => {
    const [tool] = mapMcpTools([echo]);
    expect(tool).toEqual({
      name: 'echo',
      title: 'Echo Tool',
      description: 'Echoes back the input string',
      scope: 'read',
      annotations: { readOnlyHint: true, openWorldHint: false },
      input_schema: echo.inputSchema,
    });
  });

  it('gives a tool without description or properties an empty description and properties', () => {
    const [tool] = mapMcpTools([{ name: 'ping.now', inputSchema: { type: 'object' }, annotations: { title: 'Ping' } }]);
    expect(tool).toMatchObject({ name: 'ping.now', title: 'Ping', description: '', scope: 'write' });
    expect(tool!.input_schema).toEqual({ type: 'object', properties: {} });
  });

  it('derives scopes: read-only → read, destructive → delete, else write', () => {
    expect(scopeOfAnnotations({ readOnlyHint: true, destructiveHint: true })).toBe('read');
    expect(scopeOfAnnotations({ destructiveHint: true })).toBe('delete');
    expect(scopeOfAnnotations({ idempotentHint: true })).toBe('write');
    expect(scopeOfAnnotations(undefined)).toBe('write');
  });

  it('refuses duplicate names, a schema that is no object schema and a bad name, naming each', () => {
    const err = refusal([
      echo,
      { ...echo },
      { name: 'list', inputSchema: { type: 'array' } },
      { name: 'str', inputSchema: 'object' },
      { name: 'has space', inputSchema: { type: 'object' } },
    ]);
    expect(err.code).toBe('MANIFEST_INVALID');
    expect(err.details).toEqual([
      { field: 'tools[1].name', message: 'duplicates the tool name "echo"' },
      { field: 'tools[2].inputSchema.type', message: 'must be "object" (an object schema)' },
      { field: 'tools[3].inputSchema', message: 'must be a JSON Schema object' },
      { field: 'tools[4].name', message: 'must be 1 to 128 letters, digits, _, - or .' },
    ]);
  });

  it('refuses more than 200 tools, a schema over 64 KiB and a description over 5000 characters', () => {
    const many = Array.from({ length: 201 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    expect(refusal(many).details).toEqual([
      { field: 'tools', message: 'must list at most 200 tools (the server lists 201)' },
    ]);
    const big = {
      type: 'object',
      properties: { a: { type: 'string', description: 'x'.repeat(MCP_MAX_SCHEMA_BYTES) } },
    };
    expect(refusal([{ name: 'big', inputSchema: big }]).details).toEqual([
      { field: 'tools[0].inputSchema', message: 'must be at most 65536 bytes' },
    ]);
    expect(refusal([{ name: 'd', description: 'y'.repeat(5001), inputSchema: { type: 'object' } }]).details).toEqual([
      { field: 'tools[0].description', message: 'must be at most 5000 characters' },
    ]);
  });

  it('refuses a list over 1 MiB as a whole', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', description: 'z'.repeat(60_000) } } };
    const tools = Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, inputSchema: schema }));
    expect(refusal(tools).details).toEqual([{ field: 'tools', message: 'must be at most 1048576 bytes as a whole' }]);
  });
});

describe('the manifest-shaped snapshot of an MCP server', () => {
  const endpoint = 'https://mcp.example.com/mcp';
  const authorization: McpAuthorization = {
    resource: endpoint,
    resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource',
    issuer: 'https://auth.example.com',
    authorizationEndpoint: 'https://auth.example.com/authorize',
    tokenEndpoint: 'https://auth.example.com/token',
    revocationEndpoint: null,
    registrationEndpoint: null,
    clientIdMetadataDocumentSupported: false,
    issParameterSupported: false,
    codeChallengeMethods: ['S256'],
    tokenEndpointAuthMethods: null,
    scopesSupported: null,
    challengeScope: 'files:read files:write',
  };

  it('takes the title, version and first line of the instructions; oauth2 from the discovered server', () => {
    const manifest = mcpManifest(
      endpoint,
      { name: 'files', title: 'Files', version: '1.2.0', instructions: 'Reads files.\nMore.' },
      [],
      authorization,
    );
    expect(manifest).toEqual({
      name: 'Files',
      version: '1.2.0',
      description: 'Reads files.',
      server: { url: endpoint },
      auth: {
        type: 'oauth2',
        authorization_url: 'https://auth.example.com/authorize',
        token_url: 'https://auth.example.com/token',
        scopes: ['files:read', 'files:write'],
        issuer: 'https://auth.example.com',
      },
      tools: [],
    });
    expect(siteStatus({ protocol: 'mcp', manifest })).toBe('needs_connection');
  });

  it('is a bearer site named by its host when the server said nothing of itself, ready once it lists tools', () => {
    const manifest = mcpManifest(endpoint, null, mapMcpTools([echo]), null);
    expect(manifest).toMatchObject({
      name: 'mcp.example.com',
      version: '0',
      description: '',
      auth: { type: 'bearer' },
    });
    expect(siteStatus({ protocol: 'mcp', manifest })).toBe('ready');
    expect(siteStatus({ protocol: 'agentsite', manifest: { ...manifest, tools: [] } })).toBe('ready');
  });
});
