import { afterAll, describe, expect, it } from '@jest/globals';
import type { Settings } from '../config/settings.js';
import { refusal } from '../common/testing/refusals.js';
import { SiteHttpClient } from './site-http.js';

describe('SiteHttpClient.assertSiteUrl and what is not a web address', () => {
  const client = new SiteHttpClient({ siteAllowPrivateHosts: [] } as unknown as Settings);
  afterAll(() => client.onModuleDestroy());

  async function answer(raw: string): Promise<Array<string | undefined>> {
    const err = await refusal(Promise.resolve().then(() => client.assertSiteUrl(raw)));
    return [err.code, err.message, err.details?.[0]?.field, err.details?.[0]?.message];
  }

  it('says a string that is no web address at all is not one, and one of another scheme must use https://', async () => {
    // "localhost:3000" and "mailto:…" parse as URLs of the schemes "localhost:" and "mailto:".
    for (const raw of ['not a url', 'notes.example.com', 'localhost:3000', 'mailto:someone@example.com', '']) {
      expect(await answer(raw)).toEqual([
        'INVALID_URL',
        'url is not a web address: give it as https://…',
        'url',
        'is not a web address',
      ]);
    }
    for (const raw of ['http://notes.example.com', 'ftp://notes.example.com', 'HTTP://notes.example.com']) {
      expect(await answer(raw)).toEqual(['INVALID_URL', 'url must use https://', 'url', 'must use https://']);
    }
    expect(client.assertSiteUrl(' https://notes.example.com ').hostname).toBe('notes.example.com');
  });
});

describe('SiteHttpClient.assertSiteUrl with allowLoopbackHttp (the MCP conformance command only)', () => {
  const service = new SiteHttpClient({ siteAllowPrivateHosts: [] } as unknown as Settings);
  const command = new SiteHttpClient({
    siteAllowPrivateHosts: [],
    allowPrivateAddresses: true,
    allowLoopbackHttp: true,
  } as unknown as Settings);
  afterAll(() => {
    service.onModuleDestroy();
    command.onModuleDestroy();
  });

  it('lets plain http reach a loopback host, and nothing else', async () => {
    for (const raw of ['http://localhost:4000/mcp', 'http://127.0.0.1:4000/', 'http://[::1]:4000/']) {
      expect((await refusal(Promise.resolve().then(() => service.assertSiteUrl(raw)))).code).toBe('INVALID_URL');
      expect(command.assertSiteUrl(raw).protocol).toBe('http:');
    }
    for (const raw of ['http://notes.example.com', 'http://10.0.0.5/', 'http://localhost.example.com/']) {
      expect((await refusal(Promise.resolve().then(() => command.assertSiteUrl(raw)))).message).toBe(
        'url must use https://',
      );
    }
  });
});
