import { describe, expect, it } from '@jest/globals';
import { deriveScope, scopesFor } from './scopes.js';

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
