import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadSettings } from '../config/settings.js';
import { oauthCompleteTarget } from './oauth-complete-target.js';

describe('where the OAuth callback sends the browser', () => {
  const base = { publicBaseUrl: 'https://agents.example.com' };

  it("defaults to the console's completion page, only when the console is built", () => {
    expect(oauthCompleteTarget({ ...base, oauthCompleteUrl: undefined }, true)).toBe(
      'https://agents.example.com/oauth/complete',
    );
    expect(oauthCompleteTarget({ ...base, oauthCompleteUrl: undefined }, false)).toBeNull();
  });

  it('OAUTH_COMPLETE_URL wins over the console; none turns the redirect off', () => {
    const env = {
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'oauth-target-')),
      PUBLIC_BASE_URL: 'https://agents.example.com/',
    };
    const explicit = loadSettings({ ...env, OAUTH_COMPLETE_URL: 'https://app.example.com/done' });
    expect(oauthCompleteTarget(explicit, true)).toBe('https://app.example.com/done');
    const off = loadSettings({ ...env, OAUTH_COMPLETE_URL: 'none' });
    expect(off.oauthCompleteUrl).toBeNull();
    expect(oauthCompleteTarget(off, true)).toBeNull();
    const unset = loadSettings(env);
    expect(oauthCompleteTarget(unset, true)).toBe('https://agents.example.com/oauth/complete');
    expect(() => loadSettings({ ...env, OAUTH_COMPLETE_URL: 'nowhere' })).toThrow(/OAUTH_COMPLETE_URL/);
  });
});
