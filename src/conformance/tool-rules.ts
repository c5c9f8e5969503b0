import type { Manifest, ManifestTool } from '../sites/manifest.js';
import { deriveScope } from '../sites/scopes.js';
import type { SiteResponse } from '../sites/site-http.js';
import { parseRetryAfter } from '../tools/retry-after.js';
import { fail, pass, type RuleResult, skipped } from './conformance-report.js';
import { sampleInput } from './sample-input.js';
import {
  CHECK_TIMEOUT_MS,
  type CheckerHttp,
  CheckStopped,
  connectProblem,
  errorText,
  excerpt,
  readJson,
} from './site-answers.js';

const NO_TOKEN = 'no test credential (give --token, or --user with AGENTSITE_CHECK_PASSWORD for an OAuth site)';
const BURST_CONCURRENCY = 10;

export function toolEndpoint(manifest: Manifest, tool: ManifestTool): string {
  return `${manifest.server.url.replace(/\/+$/, '')}/tools/${encodeURIComponent(tool.name)}`;
}

async function callTool(
  http: CheckerHttp,
  manifest: Manifest,
  tool: ManifestTool,
  token: string | undefined,
  input: unknown,
): Promise<SiteResponse> {
  return http.request({
    method: 'POST',
    url: toolEndpoint(manifest, tool),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(input),
    timeoutMs: CHECK_TIMEOUT_MS,
  });
}

/** Calls a tool; a connection failure becomes a message instead of an exception. */
async function tryCall(...args: Parameters<typeof callTool>): Promise<SiteResponse | string> {
  try {
    return await callTool(...args);
  } catch (err) {
    const problem = connectProblem(err);
    if (problem === undefined) {
      throw err;
    }
    return problem.message;
  }
}

function unauthorizedRule(id: string, endpoint: string, response: SiteResponse | string): RuleResult {
  const title = 'Refuses a call without a token: 401 JSON with `error`';
  if (typeof response === 'string') {
    return fail(id, title, `${endpoint}: ${response}`, 'Serve every tool endpoint over HTTPS on server.url.');
  }
  const answer = readJson(response);
  if (response.status !== 401) {
    return fail(
      id,
      title,
      `answered HTTP ${response.status} to a call without Authorization`,
      'Answer 401 when the Authorization: Bearer header is missing, unknown, expired or revoked.',
    );
  }
  if (!answer.isJson || errorText(answer) === undefined) {
    return fail(
      id,
      title,
      `the 401 answer is not JSON with a string "error" (${answer.contentType || 'no content type'}: ${excerpt(response)})`,
      'Answer errors as Content-Type: application/json with {"error": "<what is wrong>"}.',
    );
  }
  return pass(id, title, `401: ${errorText(answer)}`);
}

export interface ToolOutcome {
  rules: RuleResult[];
  /** Tools whose sample input the site accepted with a 2xx (candidates for the rate-limit burst). */
  accepted: ManifestTool[];
  /** Why the tools after the last rule were not checked (the client may send no more). */
  stopped?: CheckStopped;
}

/**
 * Per tool (the first `maxTools` when set): 401 without a token; with it, the sample input accepted
 * and the answer JSON.
 */
export async function checkTools(
  http: CheckerHttp,
  manifest: Manifest,
  token: string | undefined,
  maxTools = manifest.tools.length,
): Promise<ToolOutcome> {
  const rules: RuleResult[] = [];
  const accepted: ManifestTool[] = [];
  const checked = manifest.tools.slice(0, maxTools);
  try {
    await toolRules(http, manifest, token, checked, rules, accepted);
  } catch (err) {
    if (!(err instanceof CheckStopped)) {
      throw err;
    }
    return { rules, accepted, stopped: err };
  }
  const unchecked = manifest.tools.slice(maxTools).map((t) => t.name);
  if (unchecked.length > 0) {
    rules.push(
      skipped(
        'tools.unchecked',
        `Tools after the first ${maxTools}`,
        `${unchecked.length} more tools not checked (${unchecked.join(', ')}): run agentsite-check to check them all`,
      ),
    );
  }
  return { rules, accepted };
}

async function toolRules(
  http: CheckerHttp,
  manifest: Manifest,
  token: string | undefined,
  tools: ManifestTool[],
  rules: RuleResult[],
  accepted: ManifestTool[],
): Promise<void> {
  for (const tool of tools) {
    const id = `tools.${tool.name}`;
    const input = sampleInput(tool);
    rules.push(
      unauthorizedRule(
        `${id}.unauthorized`,
        toolEndpoint(manifest, tool),
        await tryCall(http, manifest, tool, undefined, input),
      ),
    );
    const inputTitle = `Accepts the declared input ${JSON.stringify(input)}`;
    const jsonTitle = 'Answers JSON';
    if (token === undefined) {
      rules.push(skipped(`${id}.input`, inputTitle, NO_TOKEN), skipped(`${id}.json`, jsonTitle, NO_TOKEN));
      continue;
    }
    const response = await tryCall(http, manifest, tool, token, input);
    if (typeof response === 'string') {
      rules.push(
        fail(`${id}.input`, inputTitle, response, 'Serve every tool endpoint over HTTPS on server.url.'),
        skipped(`${id}.json`, jsonTitle, 'no answer'),
      );
      continue;
    }
    const answer = readJson(response);
    const said = errorText(answer) ?? excerpt(response);
    const status = response.status;
    if (status >= 200 && status < 300) {
      accepted.push(tool);
      rules.push(pass(`${id}.input`, inputTitle, `HTTP ${status}`));
    } else if (status === 404 || status === 409) {
      // The input was understood: the object the sample names does not exist (or conflicts).
      rules.push(pass(`${id}.input`, inputTitle, `HTTP ${status} about the sample's data: ${said}`));
    } else if (status === 403) {
      rules.push(skipped(`${id}.input`, inputTitle, `the test credential may not use this tool (403: ${said})`));
    } else if (status === 429) {
      rules.push(skipped(`${id}.input`, inputTitle, `rate limited before the check (429: ${said})`));
    } else if (status === 401) {
      rules.push(
        fail(
          `${id}.input`,
          inputTitle,
          `the test credential was refused (401: ${said})`,
          'Give a valid token of a test account; tokens the site issued must be accepted.',
        ),
      );
    } else {
      rules.push(
        fail(
          `${id}.input`,
          inputTitle,
          `HTTP ${status}: ${said}`,
          status >= 500
            ? 'A valid input must not make the tool fail: fix the server error.'
            : 'Accept every input that matches input_schema; list what the tool needs in `required`.',
        ),
      );
    }
    rules.push(
      answer.isJson
        ? pass(`${id}.json`, jsonTitle, `HTTP ${status} ${answer.contentType}`)
        : fail(
            `${id}.json`,
            jsonTitle,
            `HTTP ${status} answered ${answer.contentType || 'no content type'}${answer.json === undefined ? ` (${excerpt(response)})` : ''}`,
            'Answer results and errors as Content-Type: application/json (errors as {"error": "..."}).',
          ),
    );
  }
}

const RATE_TITLE = '429 with Retry-After when limited';

/**
 * Calls one accepted tool (a read tool when there is one: the burst repeats its effect) up to `burst`
 * times, a few at once, until the site answers 429; that answer must carry Retry-After and JSON.
 */
export async function checkRateLimit(
  http: CheckerHttp,
  manifest: Manifest,
  token: string | undefined,
  accepted: ManifestTool[],
  burst: number,
): Promise<RuleResult> {
  const id = 'tools.rate-limit';
  if (token === undefined) {
    return skipped(id, RATE_TITLE, NO_TOKEN);
  }
  const tool = accepted.find((t) => deriveScope(t) === 'read') ?? accepted[0];
  if (tool === undefined) {
    return skipped(id, RATE_TITLE, 'no tool accepted its sample input, so none can be called repeatedly');
  }
  const input = sampleInput(tool);
  let sent = 0;
  let limited: SiteResponse | undefined;
  let stopped: CheckStopped | undefined;
  while (sent < burst && limited === undefined && stopped === undefined) {
    const batch = Math.min(BURST_CONCURRENCY, burst - sent);
    const settled = await Promise.allSettled(
      Array.from({ length: batch }, () => tryCall(http, manifest, tool, token, input)),
    );
    for (const outcome of settled) {
      if (outcome.status === 'fulfilled') {
        sent += 1;
        if (typeof outcome.value !== 'string' && outcome.value.status === 429) {
          limited ??= outcome.value;
        }
      } else if (outcome.reason instanceof CheckStopped) {
        stopped = outcome.reason;
      } else {
        throw outcome.reason;
      }
    }
  }
  if (limited === undefined && stopped !== undefined) {
    return skipped(id, RATE_TITLE, `${tool.name} was not limited within the ${sent} calls sent: ${stopped.message}`);
  }
  if (limited === undefined) {
    return skipped(id, RATE_TITLE, `${tool.name} was not limited within ${burst} calls (raise --burst to go further)`);
  }
  const retryAfter = limited.headers['retry-after'];
  const answer = readJson(limited);
  if (parseRetryAfter(retryAfter) === undefined) {
    return fail(
      id,
      RATE_TITLE,
      `${tool.name} answered 429 ${retryAfter === undefined ? 'without Retry-After' : `with an unreadable Retry-After "${retryAfter}"`}`,
      'Send Retry-After (seconds, or an HTTP date) with every 429: agentsite waits that long before calling again.',
    );
  }
  if (!answer.isJson || errorText(answer) === undefined) {
    return fail(
      id,
      RATE_TITLE,
      `${tool.name}'s 429 is not JSON with a string "error" (${answer.contentType || 'no content type'})`,
      'Answer errors as Content-Type: application/json with {"error": "<what is wrong>"}.',
    );
  }
  return pass(id, RATE_TITLE, `${tool.name}: 429 after at most ${sent} calls, Retry-After: ${retryAfter}`);
}
