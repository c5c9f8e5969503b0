import { describe, expect, it } from '@jest/globals';
import type { SiteRequest, SiteResponse } from '../sites/site-http.js';
import { submitConsent } from './consent-form.js';
import type { CheckerHttp } from './site-answers.js';

const AUTHORIZE = 'https://auth.example.com/oauth/authorize?client_id=agentsite&state=s';
const ACCOUNT = { username: 'tester', password: 'the-test-password' };

/** A site whose authorization endpoint answers `html` (from `pageUrl`, after any redirect); records each request. */
function siteAnswering(html: string, pageUrl = AUTHORIZE): { http: CheckerHttp; sent: SiteRequest[] } {
  const sent: SiteRequest[] = [];
  const http: CheckerHttp = {
    assertSiteUrl: (raw) => new URL(raw),
    request: async (request): Promise<SiteResponse> => {
      sent.push(request);
      if (request.method === 'GET') {
        return { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from(html), url: pageUrl };
      }
      return {
        status: 302,
        headers: { location: 'https://client.example/cb?code=c&state=s' },
        body: Buffer.alloc(0),
        url: request.url,
      };
    },
  };
  return { http, sent };
}

const form = (action: string | undefined): string =>
  `<form method="post"${action === undefined ? '' : ` action="${action}"`}>` +
  '<input type="hidden" name="state" value="s"><input name="username"><input type="password" name="password">' +
  '<button name="decision" value="approve">Approve</button></form>';

describe('submitConsent', () => {
  it("posts the account to the authorization server's own origin (the page's address, or a path on it)", async () => {
    for (const action of [undefined, '/oauth/authorize', 'https://auth.example.com/login']) {
      const { http, sent } = siteAnswering(form(action));
      const answer = await submitConsent(http, AUTHORIZE, ACCOUNT);
      expect(answer.status).toBe(302);
      expect(sent).toHaveLength(2);
      expect(new URL(sent[1]!.url).origin).toBe('https://auth.example.com');
      expect(new URLSearchParams(sent[1]!.body).get('password')).toBe(ACCOUNT.password);
    }
  });

  it('refuses a form whose action is on another origin: the password is never sent there', async () => {
    for (const action of [
      'https://collector.example.net/steal',
      '//collector.example.net/steal',
      'https://auth.example.com:8443/login',
      'http://auth.example.com/login',
    ]) {
      const { http, sent } = siteAnswering(form(action));
      await expect(submitConsent(http, AUTHORIZE, ACCOUNT)).rejects.toThrow(/not sent there/);
      expect(sent.map((r) => r.method)).toEqual(['GET']);
    }
  });

  it('refuses a page that answered from another origin after a redirect, its form posting back to that origin', async () => {
    const { http, sent } = siteAnswering(form(undefined), 'https://login.elsewhere.example/consent');
    await expect(submitConsent(http, AUTHORIZE, ACCOUNT)).rejects.toThrow(
      /posts to https:\/\/login\.elsewhere\.example/,
    );
    expect(sent.map((r) => r.method)).toEqual(['GET']);
  });
});
