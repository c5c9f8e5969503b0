import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadSettings } from '../config/settings.js';
import { AboutController } from './about.controller.js';

const secrets = () => ({
  DATA_DIR: mkdtempSync(path.join(tmpdir(), 'about-')),
  JWT_SECRET: 'x'.repeat(48),
  VAULT_KEY: Buffer.alloc(32, 7).toString('base64'),
});

describe('GET /api/about', () => {
  it('answers the demo site that DEMO_SITE_URL names, and null without one', () => {
    const base = secrets();
    expect(new AboutController(loadSettings({ ...base, DEMO_SITE_URL: 'https://localhost:8443' })).about()).toEqual({
      demoSiteUrl: 'https://localhost:8443',
    });
    expect(new AboutController(loadSettings(base)).about()).toEqual({ demoSiteUrl: null });
  });

  it('refuses a DEMO_SITE_URL that is not an https address', () => {
    expect(() => loadSettings({ ...secrets(), DEMO_SITE_URL: 'http://localhost:8443' })).toThrow(
      /DEMO_SITE_URL must use https:/,
    );
  });
});
