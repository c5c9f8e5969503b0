import { describe, expect, it } from '@jest/globals';
import { deriveScope, mcpScopesFor, missingMcpScopes, scopesFor, siteScopeNamed } from './scopes.js';

describe('scopes', () => {
  it.each([
    ['search_notes', 'read'],
    ['getUser', 'read'],
    ['list', 'read'],
    ['fetch_page', 'read'],
    ['create_note', 'write'],
    ['send_email', 'write'],
    ['upload', 'write'],
    ['delete_note', 'delete'],
    ['removeMember', 'delete'],
    ['manage_users', 'admin'],
    ['admin_settings', 'admin'],
    ['user_roles', 'admin'],
    ['archive_note', 'write'],
  ])('%s needs %s', (name, scope) => {
    expect(deriveScope({ name })).toBe(scope);
  });

  it('lets the manifest override the guess, ignoring unknown values', () => {
    expect(deriveScope({ name: 'archive_note', scope: 'delete' })).toBe('delete');
    expect(deriveScope({ name: 'search', scope: 'superuser' })).toBe('read');
  });

  it('asks only for what the tools need', () => {
    expect(scopesFor([{ name: 'search_notes' }, { name: 'get_note' }])).toEqual(['read']);
    expect(scopesFor([{ name: 'delete_note' }, { name: 'search_notes' }, { name: 'create_note' }])).toEqual([
      'read',
      'write',
      'delete',
    ]);
    expect(scopesFor([])).toEqual([]);
  });
});

describe('MCP server scopes', () => {
  const read = { name: 'search', scope: 'read' };
  const write = { name: 'create_issue', scope: 'write' };
  const remove = { name: 'drop', scope: 'delete' };

  it.each([
    ['read', 'read'],
    ['files:read', 'read'],
    ['mcp.tools.write', 'write'],
    ['repo_delete', 'delete'],
    ['org/admin', 'admin'],
    ['calendar.readonly', 'read'],
    ['docs:read-only', 'read'],
    ['READ', 'read'],
    ['offline_access', undefined],
    ['repo', undefined],
    ['threads', undefined],
    ['overwrite', undefined],
  ])('%s stands for %s', (scope, ours) => {
    expect(siteScopeNamed(scope)).toBe(ours);
  });

  it('asks only for the named scopes the tools need, keeping the ones named otherwise', () => {
    const offered = ['offline_access', 'files:read', 'files:write', 'files:delete', 'admin'];
    expect(mcpScopesFor(offered, [read])).toEqual({ scopes: ['offline_access', 'files:read'], chosen: true });
    expect(mcpScopesFor(offered, [read, write])).toEqual({
      scopes: ['offline_access', 'files:read', 'files:write'],
      chosen: true,
    });
  });

  it('asks for all of them where the names do not allow choosing', () => {
    expect(mcpScopesFor(['repo', 'user'], [read])).toEqual({ scopes: ['repo', 'user'], chosen: false });
    // A scope the tools need that no name stands for: nothing says which scope gates it.
    expect(mcpScopesFor(['files:read', 'files:write'], [read, remove])).toEqual({
      scopes: ['files:read', 'files:write'],
      chosen: false,
    });
    expect(mcpScopesFor([], [read])).toEqual({ scopes: [], chosen: false });
  });

  it('says which of ours a credential lacks where the names allow it, and a step-up as missing', () => {
    const offered = ['files:read', 'files:write'];
    expect(missingMcpScopes(offered, [read, write], ['files:read'], null)).toEqual(['write']);
    expect(missingMcpScopes(offered, [read], ['files:read'], null)).toEqual([]);
    expect(missingMcpScopes(offered, [read], ['files:read'], 'files:write')).toEqual(['write']);
    expect(missingMcpScopes(['repo'], [read, write], [], null)).toEqual([]);
    expect(missingMcpScopes(['repo'], [read], ['repo'], 'admin:org')).toEqual([]);
  });
});
