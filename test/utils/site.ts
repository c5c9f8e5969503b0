import { writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { ReferenceSite, type ReferenceSiteOptions } from '../../examples/site/site.js';
import { createTestCa, issueServerCert, type TestCa } from '../../examples/site/tls.js';
import { testEnv } from '../setup/shared-runtime.js';
import type { Http, HttpAnswer } from './http.js';

export interface TestSites {
  ca: TestCa;
  caFile: string;
  start(options?: Partial<ReferenceSiteOptions>): Promise<ReferenceSite>;
  stopAll(): Promise<void>;
}

/** A test CA (written to a file for SITE_CA_CERTS) and reference sites signed by it. */
export async function testSites(): Promise<TestSites> {
  const ca = await createTestCa();
  const caFile = path.join(testEnv('workDir'), `ca-${Date.now()}-${Math.random().toString(36).slice(2)}.pem`);
  writeFileSync(caFile, ca.cert);
  const tls = await issueServerCert(ca);
  const started: ReferenceSite[] = [];
  return {
    ca,
    caFile,
    async start(options = {}) {
      const site = await ReferenceSite.start({ tls, ...options });
      started.push(site);
      return site;
    },
    async stopAll() {
      await Promise.all(started.map((s) => s.stop()));
    },
  };
}

/** The stack settings that let the service reach these sites (trust the CA, allow their loopback ports). */
export function siteEnv(sites: TestSites, allowed: ReferenceSite[], publicBaseUrl?: string): Record<string, string> {
  return {
    SITE_CA_CERTS: sites.caFile,
    SITE_ALLOW_PRIVATE_HOSTS: allowed.map((s) => `localhost:${s.port}`).join(','),
    ...(publicBaseUrl ? { PUBLIC_BASE_URL: publicBaseUrl } : {}),
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTPS request that trusts the test CA and never follows redirects (to drive a consent page like a browser). */
export function httpsRequest(
  ca: TestCa,
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, ca: ca.cert },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Plays the user at the site's consent page: approves, and returns the redirect to the service's callback. */
export async function approveAtSite(
  ca: TestCa,
  authorizationUrl: string,
  user = { username: 'alice', password: 'alice-password' },
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const page = await httpsRequest(ca, authorizationUrl);
  if (page.status !== 200) {
    throw new Error(`consent page answered ${page.status}: ${page.body}`);
  }
  const form = new URLSearchParams(new URL(authorizationUrl).searchParams);
  form.set('username', user.username);
  form.set('password', user.password);
  form.set('decision', decision);
  const submitted = await httpsRequest(ca, new URL('/oauth/authorize', authorizationUrl).toString(), {
    method: 'POST',
    body: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (submitted.status !== 302) {
    throw new Error(`consent answered ${submitted.status}: ${submitted.body}`);
  }
  return new URL(String(submitted.headers.location));
}

/** The parameters of the site's redirect that the completion step takes. */
export function completionBody(callback: URL): Record<string, string> {
  const body: Record<string, string> = {};
  for (const name of ['code', 'state', 'iss', 'error']) {
    const value = callback.searchParams.get(name);
    if (value !== null) {
      body[name] = value;
    }
  }
  return body;
}

/**
 * What a client does after the site's redirect: the browser lands on the service's callback, which
 * redeems nothing and hands the values on (a 302 to the completion page carrying them in its query,
 * as the console's page reads them; or, with no completion page, as JSON), then the client completes
 * the connection with `POST /api/oauth/complete` and the token of the user it acts for.
 */
export async function completeOAuth(http: Http, callback: URL, token: string): Promise<HttpAnswer> {
  const landed = await http.get(`${callback.pathname}${callback.search}`, {
    headers: { accept: 'application/json' },
    redirect: 'manual',
  });
  let body: unknown;
  if (landed.status === 302) {
    body = completionBody(new URL(landed.headers.get('location')!));
  } else if (landed.status === 200) {
    body = landed.body.body;
  } else {
    throw new Error(`the callback answered ${landed.status}: ${landed.text}`);
  }
  return http.post('/api/oauth/complete', body, { token });
}
