import * as oidc from 'openid-client';
import type { Manifest, OAuthManifestAuth } from '../sites/manifest.js';
import { type CheckOptions, fail, pass, type RuleResult, skipped } from './conformance-report.js';
import { authorizationRequest, consent, get, refused, tokenAnswer, tokenRequest } from './oauth-requests.js';
import { type CheckerHttp, connectProblem, errorText, excerpt, readJson } from './site-answers.js';

export interface OAuthSession {
  accessToken: string;
  refreshToken?: string;
}

const TITLES: Record<string, string> = {
  'oauth.pkce': 'Authorization requires PKCE S256, verified at the token endpoint',
  'oauth.redirect-uri': 'Exact redirect_uri',
  'oauth.state': '`state` returned unchanged',
  'oauth.token': 'Token endpoint redeems the code',
  'oauth.refresh-rotation': 'Refresh tokens rotate; reuse of the old one is refused',
};

export function skippedOAuthRules(ids: string[], reason: string): RuleResult[] {
  return ids.map((id) => skipped(id, TITLES[id]!, reason));
}

/**
 * The OAuth rules up to the token exchange (refresh rotation is oauthRefreshRotation, run last).
 * Without a test account only what needs no sign-in is checked: PKCE and redirect_uri at the
 * authorization endpoint.
 */
export async function checkOAuth(
  http: CheckerHttp,
  manifest: Manifest,
  options: CheckOptions,
): Promise<{ rules: RuleResult[]; session?: OAuthSession }> {
  const auth = manifest.auth as OAuthManifestAuth;
  try {
    return await oauthRules(http, auth, options);
  } catch (err) {
    const problem = connectProblem(err);
    if (problem === undefined) {
      throw err;
    }
    return {
      rules: [
        fail('oauth.pkce', TITLES['oauth.pkce']!, problem.message, problem.hint),
        ...skippedOAuthRules(
          ['oauth.redirect-uri', 'oauth.state', 'oauth.token'],
          'the OAuth endpoints could not be reached',
        ),
      ],
    };
  }
}

async function oauthRules(
  http: CheckerHttp,
  auth: OAuthManifestAuth,
  options: CheckOptions,
): Promise<{ rules: RuleResult[]; session?: OAuthSession }> {
  const rules = new Map<string, RuleResult>();
  const valid = await get(http, (await authorizationRequest(auth, options)).url);
  const noPkce = await get(
    http,
    (
      await authorizationRequest(auth, options, (p) => {
        p.delete('code_challenge');
        p.delete('code_challenge_method');
      })
    ).url,
  );
  if (refused(valid)) {
    rules.set(
      'oauth.pkce',
      fail(
        'oauth.pkce',
        TITLES['oauth.pkce']!,
        `refused a valid request (client ${options.clientId}, S256): HTTP ${valid.status} ${excerpt(valid)}`,
        `Register client_id ${options.clientId} with redirect_uri ${options.redirectUri} and accept code_challenge_method=S256.`,
      ),
    );
  } else if (!refused(noPkce)) {
    rules.set(
      'oauth.pkce',
      fail(
        'oauth.pkce',
        TITLES['oauth.pkce']!,
        `accepted an authorization request without code_challenge (HTTP ${noPkce.status})`,
        'Refuse authorization requests without code_challenge and code_challenge_method=S256 (OAuth 2.1).',
      ),
    );
  }
  const tampered = `${options.redirectUri}x`;
  const other = await get(
    http,
    (await authorizationRequest(auth, options, (p) => p.set('redirect_uri', tampered))).url,
  );
  if (!refused(other) || (other.headers.location ?? '').startsWith(tampered)) {
    rules.set(
      'oauth.redirect-uri',
      fail(
        'oauth.redirect-uri',
        TITLES['oauth.redirect-uri']!,
        `accepted redirect_uri ${tampered}, which differs from the registered ${options.redirectUri} (HTTP ${other.status})`,
        'Compare redirect_uri with the registered URIs character for character (no prefix or pattern match), and show an error page instead of redirecting.',
      ),
    );
  }
  const done = (): RuleResult[] =>
    ['oauth.pkce', 'oauth.redirect-uri', 'oauth.state', 'oauth.token'].map((id) => rules.get(id)!);
  if (options.account === undefined) {
    const reason =
      options.noAccountReason ??
      'no test account (--user, with AGENTSITE_CHECK_PASSWORD or --password-stdin) to pass the consent page';
    rules.set(
      'oauth.pkce',
      rules.get('oauth.pkce') ??
        pass(
          'oauth.pkce',
          TITLES['oauth.pkce']!,
          'the authorization endpoint takes S256 and refuses a request without code_challenge (token endpoint not checked: no test account)',
        ),
    );
    rules.set(
      'oauth.redirect-uri',
      rules.get('oauth.redirect-uri') ??
        pass('oauth.redirect-uri', TITLES['oauth.redirect-uri']!, `refused ${tampered}`),
    );
    for (const rule of skippedOAuthRules(['oauth.state', 'oauth.token'], reason)) {
      rules.set(rule.id, rule);
    }
    return { rules: done() };
  }

  // First sign-in: the redirect's target and state, then a wrong code_verifier must be refused.
  const first = await authorizationRequest(auth, options);
  let landed: URL;
  try {
    landed = await consent(http, first, options);
  } catch (err) {
    const reason = `could not pass the consent page: ${err instanceof Error ? err.message : String(err)}`;
    for (const rule of skippedOAuthRules(['oauth.pkce', 'oauth.redirect-uri', 'oauth.state', 'oauth.token'], reason)) {
      rules.set(rule.id, rules.get(rule.id) ?? rule);
    }
    return { rules: done() };
  }
  const target = `${landed.origin}${landed.pathname}`;
  const registered = new URL(options.redirectUri);
  if (rules.get('oauth.redirect-uri') === undefined) {
    rules.set(
      'oauth.redirect-uri',
      target === `${registered.origin}${registered.pathname}`
        ? pass('oauth.redirect-uri', TITLES['oauth.redirect-uri']!, `refused ${tampered}; redirected to ${target}`)
        : fail(
            'oauth.redirect-uri',
            TITLES['oauth.redirect-uri']!,
            `the consent redirected to ${target}, not to the redirect_uri ${options.redirectUri}`,
            'Redirect to the redirect_uri of the request, exactly as given.',
          ),
    );
  }
  const state = landed.searchParams.get('state');
  rules.set(
    'oauth.state',
    state === first.state
      ? pass('oauth.state', TITLES['oauth.state']!, 'the redirect carried the state sent')
      : fail(
          'oauth.state',
          TITLES['oauth.state']!,
          state === null
            ? 'the redirect carries no state'
            : `the redirect carried state "${state}" instead of "${first.state}"`,
          "Return the request's state parameter unchanged in the redirect (agentsite refuses any other).",
        ),
  );
  const code = landed.searchParams.get('code');
  if (code === null) {
    const said = landed.searchParams.get('error') ?? 'no code';
    for (const rule of skippedOAuthRules(['oauth.pkce', 'oauth.token'], `the consent redirect carried ${said}`)) {
      rules.set(rule.id, rules.get(rule.id) ?? rule);
    }
    return { rules: done() };
  }
  const base = { grant_type: 'authorization_code', client_id: options.clientId, redirect_uri: options.redirectUri };
  const wrong = await tokenRequest(http, auth, { ...base, code, code_verifier: oidc.randomPKCECodeVerifier() });
  if (rules.get('oauth.pkce') === undefined) {
    const said = errorText(readJson(wrong));
    rules.set(
      'oauth.pkce',
      wrong.status === 400 && said === 'invalid_grant'
        ? pass('oauth.pkce', TITLES['oauth.pkce']!, 'S256 required; a wrong code_verifier got invalid_grant')
        : fail(
            'oauth.pkce',
            TITLES['oauth.pkce']!,
            `a wrong code_verifier was answered ${tokenAnswer(wrong)}, not 400 invalid_grant`,
            'Check code_verifier against the stored code_challenge (SHA-256, base64url) and answer 400 {"error":"invalid_grant"}.',
          ),
    );
  }

  // Second sign-in: the code redeemed as agentsite redeems it.
  const second = await authorizationRequest(auth, options);
  const code2 = (await consent(http, second, options)).searchParams.get('code') ?? '';
  const redeemed = await tokenRequest(http, auth, { ...base, code: code2, code_verifier: second.verifier });
  const tokens = readJson(redeemed).json as Record<string, unknown> | undefined;
  if (
    redeemed.status !== 200 ||
    typeof tokens?.access_token !== 'string' ||
    String(tokens.token_type).toLowerCase() !== 'bearer'
  ) {
    rules.set(
      'oauth.token',
      fail(
        'oauth.token',
        TITLES['oauth.token']!,
        `the code exchange answered ${tokenAnswer(redeemed)}`,
        'Answer 200 JSON with access_token, token_type "Bearer", expires_in and refresh_token.',
      ),
    );
    return { rules: done() };
  }
  const refreshToken = typeof tokens.refresh_token === 'string' ? tokens.refresh_token : undefined;
  rules.set(
    'oauth.token',
    pass(
      'oauth.token',
      TITLES['oauth.token']!,
      `access_token (expires_in ${String(tokens.expires_in ?? 'not given')})${refreshToken ? ' and refresh_token' : ''}`,
    ),
  );
  return { rules: done(), session: { accessToken: tokens.access_token, refreshToken } };
}

/** Refreshes once (a new refresh token must come back), then replays the old one (it must be refused). */
export async function oauthRefreshRotation(
  http: CheckerHttp,
  manifest: Manifest,
  options: CheckOptions,
  session: OAuthSession,
): Promise<RuleResult> {
  const id = 'oauth.refresh-rotation';
  const title = TITLES[id]!;
  const auth = manifest.auth as OAuthManifestAuth;
  if (session.refreshToken === undefined) {
    return fail(
      id,
      title,
      'the token answer carried no refresh_token',
      'Issue a refresh_token with the access token: agentsite refreshes ahead of expiry.',
    );
  }
  const form = { grant_type: 'refresh_token', client_id: options.clientId, refresh_token: session.refreshToken };
  const first = await tokenRequest(http, auth, form);
  const renewed = readJson(first).json as Record<string, unknown> | undefined;
  if (first.status !== 200 || typeof renewed?.access_token !== 'string') {
    return fail(
      id,
      title,
      `the refresh answered ${tokenAnswer(first)}`,
      'Answer a refresh_token grant with 200 JSON and a new token pair.',
    );
  }
  if (typeof renewed.refresh_token !== 'string' || renewed.refresh_token === session.refreshToken) {
    return fail(
      id,
      title,
      'the refresh did not return a new refresh_token (no rotation)',
      'Rotate refresh tokens: every refresh answers a new refresh_token and retires the old one.',
    );
  }
  const replay = await tokenRequest(http, auth, form);
  const said = errorText(readJson(replay));
  if (replay.status !== 400 || said !== 'invalid_grant') {
    return fail(
      id,
      title,
      `the old refresh token was answered ${tokenAnswer(replay)} on reuse, not 400 invalid_grant`,
      'Refuse a rotated refresh token with 400 {"error":"invalid_grant"} (and revoke its grant: a replay means it leaked).',
    );
  }
  return pass(id, title, 'a new refresh_token on refresh; the old one refused with invalid_grant');
}
