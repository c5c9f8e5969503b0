/** The requests the OAuth rules make: authorization requests, the consent page, token requests. */
import * as oidc from 'openid-client';
import type { OAuthManifestAuth } from '../sites/manifest.js';
import type { SiteResponse } from '../sites/site-http.js';
import type { CheckOptions } from './conformance-report.js';
import { submitConsent } from './consent-form.js';
import { CHECK_TIMEOUT_MS, type CheckerHttp, errorText, excerpt, readJson } from './site-answers.js';

export interface Attempt {
  state: string;
  verifier: string;
  url: string;
}

export async function authorizationRequest(
  auth: OAuthManifestAuth,
  options: CheckOptions,
  change: (params: URLSearchParams) => void = () => {},
): Promise<Attempt> {
  const state = oidc.randomState();
  const verifier = oidc.randomPKCECodeVerifier();
  const url = new URL(auth.authorization_url);
  const params = url.searchParams;
  params.set('response_type', 'code');
  params.set('client_id', options.clientId);
  params.set('redirect_uri', options.redirectUri);
  params.set('scope', auth.scopes.join(' '));
  params.set('state', state);
  params.set('code_challenge', await oidc.calculatePKCECodeChallenge(verifier));
  params.set('code_challenge_method', 'S256');
  change(params);
  return { state, verifier, url: url.toString() };
}

/** Whether an authorization endpoint's answer refuses the request (an error page, or a redirect with `error`). */
export function refused(response: SiteResponse): boolean {
  if (response.status >= 400) {
    return true;
  }
  const location = response.headers.location;
  return location !== undefined && new URL(location, 'https://x.invalid').searchParams.has('error');
}

export async function get(http: CheckerHttp, url: string): Promise<SiteResponse> {
  return http.request({ method: 'GET', url, timeoutMs: CHECK_TIMEOUT_MS, redirect: 'manual' });
}

export async function tokenRequest(
  http: CheckerHttp,
  auth: OAuthManifestAuth,
  form: Record<string, string>,
): Promise<SiteResponse> {
  return http.request({
    method: 'POST',
    url: auth.token_url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
    timeoutMs: CHECK_TIMEOUT_MS,
  });
}

/**
 * A token endpoint's answer in a message: its status and error, or the names of the fields it
 * carried (never the tokens themselves: reports are printed and returned by the API).
 */
export function tokenAnswer(response: SiteResponse): string {
  const answer = readJson(response);
  const said = errorText(answer);
  if (said !== undefined) {
    return `HTTP ${response.status} ${said}`;
  }
  const body = answer.json;
  if (typeof body === 'object' && body !== null) {
    const fields = Object.entries(body).map(([k, v]) => (k === 'token_type' ? `${k}=${String(v)}` : k));
    return `HTTP ${response.status} with ${fields.join(', ') || 'no fields'}`;
  }
  return `HTTP ${response.status} (${answer.contentType || 'no content type'}, not JSON)`;
}

/** Signs in at the consent page and reads the redirect: its target, `state` and `code`. */
export async function consent(http: CheckerHttp, attempt: Attempt, options: CheckOptions): Promise<URL> {
  const answer = await submitConsent(http, attempt.url, options.account!);
  const location = answer.headers.location;
  if (answer.status < 300 || answer.status >= 400 || location === undefined) {
    throw new Error(`the consent form answered HTTP ${answer.status} without a redirect: ${excerpt(answer)}`);
  }
  return new URL(location, attempt.url);
}
