import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseMcpOAuthClients } from './mcp-oauth-settings.js';
import { loadSettings, SettingsError } from './settings.js';

function problemsOf(raw: string): string[] {
  const problems: string[] = [];
  parseMcpOAuthClients(raw, problems);
  return problems;
}

describe('MCP_OAUTH_CLIENTS', () => {
  it('is empty when unset, and reads clients keyed by issuer with their token endpoint method', () => {
    expect(parseMcpOAuthClients(undefined, [])).toEqual({});
    const problems: string[] = [];
    const clients = parseMcpOAuthClients(
      JSON.stringify({
        'https://auth.example.com/': { clientId: 'pub' },
        'https://idp.example.org/tenant': { clientId: 'conf', clientSecret: 'shh' },
        'https://basic.example.net': {
          clientId: 'b',
          clientSecret: 'x',
          tokenEndpointAuthMethod: 'client_secret_basic',
        },
      }),
      problems,
    );
    expect(problems).toEqual([]);
    expect(clients).toEqual({
      'https://auth.example.com': { clientId: 'pub', tokenEndpointAuthMethod: 'none' },
      'https://idp.example.org/tenant': {
        clientId: 'conf',
        clientSecret: 'shh',
        tokenEndpointAuthMethod: 'client_secret_post',
      },
      'https://basic.example.net': { clientId: 'b', clientSecret: 'x', tokenEndpointAuthMethod: 'client_secret_basic' },
    });
  });

  it('names each mistake without repeating a secret', () => {
    expect(problemsOf('not json')).toEqual(['MCP_OAUTH_CLIENTS must be a JSON object keyed by issuer URL']);
    expect(problemsOf('[]')).toEqual(['MCP_OAUTH_CLIENTS must be a JSON object keyed by issuer URL']);
    expect(problemsOf(JSON.stringify({ 'http://auth.example.com': { clientId: 'a' } }))[0]).toContain(
      'https issuer URL',
    );
    expect(problemsOf(JSON.stringify({ 'https://a.example': { clientSecret: 'topsecret' } }))[0]).toContain(
      '.clientId',
    );
    expect(
      problemsOf(
        JSON.stringify({ 'https://a.example': { clientId: 'a', tokenEndpointAuthMethod: 'private_key_jwt' } }),
      )[0],
    ).toContain('must be one of none, client_secret_post, client_secret_basic');
    const mismatch = problemsOf(
      JSON.stringify({
        'https://a.example': { clientId: 'a', clientSecret: 'topsecret', tokenEndpointAuthMethod: 'none' },
      }),
    );
    expect(mismatch[0]).toContain('a clientSecret goes with');
    expect(problemsOf(JSON.stringify({ 'https://a.example': { clientId: 'a', secret: 'x' } }))[0]).toContain(
      'unknown field(s) secret',
    );
    for (const problem of [
      ...mismatch,
      ...problemsOf(JSON.stringify({ 'https://a.example': { clientSecret: 'topsecret' } })),
    ]) {
      expect(problem).not.toContain('topsecret');
    }
  });

  it('stops the start like every other setting', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'settings-'));
    expect(() => loadSettings({ DATA_DIR: dir, MCP_OAUTH_CLIENTS: '{"https://a.example": {}}' })).toThrow(
      SettingsError,
    );
    expect(loadSettings({ DATA_DIR: dir }).mcpOAuthClients).toEqual({});
  });
});

describe('MCP_CLIENT_METADATA_URL', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'settings-'));

  it('defaults to the document the service serves under PUBLIC_BASE_URL', () => {
    expect(loadSettings({ DATA_DIR: dir, PUBLIC_BASE_URL: 'https://agents.example.com/' }).mcpClientMetadataUrl).toBe(
      'https://agents.example.com/api/oauth/client-metadata',
    );
  });

  it('takes another https URL (a static host), and refuses anything else', () => {
    const url = 'https://static.example.net/agentsite/client.json';
    expect(loadSettings({ DATA_DIR: dir, MCP_CLIENT_METADATA_URL: url }).mcpClientMetadataUrl).toBe(url);
    for (const bad of ['http://static.example.net/client.json', 'not a url']) {
      expect(() => loadSettings({ DATA_DIR: dir, MCP_CLIENT_METADATA_URL: bad })).toThrow(SettingsError);
    }
  });
});
