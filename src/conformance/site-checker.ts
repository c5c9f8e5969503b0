import { AppError } from '../common/app-error.js';
import { type Manifest, validateManifest } from '../sites/manifest.js';
import { MANIFEST_PATH, normaliseSiteUrl } from '../sites/manifest-fetcher.js';
import type { SiteResponse } from '../sites/site-http.js';
import {
  type CheckOptions,
  type ConformanceReport,
  fail,
  pass,
  reportOf,
  type RuleResult,
  skipped,
} from './conformance-report.js';
import { checkOAuth, type OAuthSession, oauthRefreshRotation, skippedOAuthRules } from './oauth-rules.js';
import { CHECK_TIMEOUT_MS, type CheckerHttp, CheckStopped, connectProblem, excerpt, readJson } from './site-answers.js';
import { checkRateLimit, checkTools } from './tool-rules.js';

const HTTPS = 'HTTPS and the certificate';
const MANIFEST_REACHABLE = 'Manifest served as JSON';
const MANIFEST_SCHEMA = 'Manifest matches the published JSON Schema';

/**
 * Runs every conformance rule against a site, through the site HTTP client given (the service's
 * SSRF-guarded one; the CLI's own, which may allow private addresses). Rules that cannot run say why.
 */
export async function checkSite(http: CheckerHttp, options: CheckOptions): Promise<ConformanceReport> {
  const rules: RuleResult[] = [];
  let siteUrl: string;
  try {
    siteUrl = normaliseSiteUrl(http.assertSiteUrl(options.url));
  } catch (err) {
    if (!(err instanceof AppError)) {
      throw err;
    }
    rules.push(fail('https', HTTPS, err.message, 'Give the https:// address of the site (HTTP is never used).'));
    rules.push(skipped('manifest.reachable', MANIFEST_REACHABLE, 'the site URL is not usable'));
    return reportOf(options.url, rules);
  }
  const manifestUrl = `${siteUrl}${MANIFEST_PATH}`;
  let response;
  try {
    response = await http.request({
      method: 'GET',
      url: manifestUrl,
      headers: { accept: 'application/json' },
      timeoutMs: CHECK_TIMEOUT_MS,
    });
  } catch (err) {
    const problem = connectProblem(err);
    if (problem === undefined) {
      throw err;
    }
    rules.push(fail('https', HTTPS, `${new URL(siteUrl).host}: ${problem.message}`, problem.hint));
    rules.push(skipped('manifest.reachable', MANIFEST_REACHABLE, 'the site could not be reached over HTTPS'));
    return reportOf(siteUrl, rules);
  }
  rules.push(pass('https', HTTPS, `${new URL(siteUrl).host} answered over TLS with a certificate valid for it`));

  const manifest = manifestRules(manifestUrl, siteUrl, response, rules);
  if (manifest === undefined) {
    return reportOf(siteUrl, rules);
  }

  try {
    await siteRules(http, manifest, options, rules);
  } catch (err) {
    if (!(err instanceof CheckStopped)) {
      throw err;
    }
    rules.push(skipped('check.stopped', 'The rules not reached', `not checked: ${err.message}`));
  }
  return reportOf(siteUrl, rules);
}

async function siteRules(http: CheckerHttp, manifest: Manifest, options: CheckOptions, rules: RuleResult[]) {
  // OAuth first: its token is the tools' credential when no bearer token was given. Its refresh
  // rotation runs last, since a site may revoke the whole grant when the old refresh token is replayed.
  let session: OAuthSession | undefined;
  if (manifest.auth.type === 'oauth2') {
    const outcome = await checkOAuth(http, manifest, options);
    rules.push(...outcome.rules);
    session = outcome.session;
  }
  const token = options.token ?? session?.accessToken;
  const tools = await checkTools(http, manifest, token, options.maxTools);
  rules.push(...tools.rules);
  if (tools.stopped !== undefined) {
    throw tools.stopped;
  }
  rules.push(await checkRateLimit(http, manifest, token, tools.accepted, options.burst));
  if (manifest.auth.type === 'oauth2') {
    rules.push(
      session === undefined
        ? skippedOAuthRules(['oauth.refresh-rotation'], 'no tokens were obtained')[0]!
        : await oauthRefreshRotation(http, manifest, options, session),
    );
  }
}

function manifestRules(
  manifestUrl: string,
  siteUrl: string,
  response: SiteResponse,
  rules: RuleResult[],
): Manifest | undefined {
  const answer = readJson(response);
  if (response.status !== 200) {
    rules.push(
      fail(
        'manifest.reachable',
        MANIFEST_REACHABLE,
        `${manifestUrl} answered HTTP ${response.status}`,
        `Serve the manifest at ${MANIFEST_PATH} with status 200.`,
      ),
    );
  } else if (!answer.isJson) {
    rules.push(
      fail(
        'manifest.reachable',
        MANIFEST_REACHABLE,
        answer.json === undefined
          ? `${manifestUrl} is not JSON: ${excerpt(response)}`
          : `${manifestUrl} is served as ${answer.contentType || 'no content type'}`,
        'Serve the manifest as JSON with Content-Type: application/json.',
      ),
    );
  } else {
    rules.push(pass('manifest.reachable', MANIFEST_REACHABLE, `${manifestUrl} answered 200 application/json`));
  }
  if (answer.json === undefined || response.status !== 200) {
    rules.push(skipped('manifest.schema', MANIFEST_SCHEMA, 'no manifest to validate'));
    return undefined;
  }
  try {
    const manifest = validateManifest(answer.json, siteUrl);
    rules.push(pass('manifest.schema', MANIFEST_SCHEMA, `${manifest.tools.length} tools, auth ${manifest.auth.type}`));
    return manifest;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'MANIFEST_INVALID') {
      throw err;
    }
    const fields = (err.details ?? []).map((d) => `${d.field}: ${d.message}`).join('; ');
    rules.push(
      fail(
        'manifest.schema',
        MANIFEST_SCHEMA,
        fields,
        'Fix each field named; the schema is served by agentsite at GET /api/conformance/manifest-schema.',
      ),
    );
    return undefined;
  }
}
