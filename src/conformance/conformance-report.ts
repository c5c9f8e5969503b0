/** The outcome of one conformance rule, as the CLI's table, its --json and the API route show it. */
export type RuleStatus = 'pass' | 'fail' | 'skipped';

export interface RuleResult {
  /** Stable id: `https`, `manifest.schema`, `tools.<name>.unauthorized`, `oauth.refresh-rotation`, … */
  id: string;
  title: string;
  status: RuleStatus;
  /** What was seen (pass), what is wrong (fail, with field-level details), or why not checked (skipped). */
  message: string;
  /** How to fix it: failures only. */
  hint?: string;
}

export interface CheckOptions {
  /** The site's https:// address (its manifest is at `<url>/.well-known/agentsite.json`). */
  url: string;
  /** A bearer token of a test account, for the tool calls. */
  token?: string;
  /** A test account to sign in with at an OAuth consent page (username and password form). */
  account?: { username: string; password: string };
  /** The OAuth client the site registered, and its exact redirect URI. */
  clientId: string;
  redirectUri: string;
  /** At most this many calls to provoke a 429. */
  burst: number;
  /** Check at most this many tools (the manifest's first ones); unset: all of them. */
  maxTools?: number;
  /** Why the OAuth consent cannot be passed when `account` is absent (said in the skipped rules). */
  noAccountReason?: string;
}

export interface ConformanceReport {
  url: string;
  checkedAt: string;
  /** True only when every rule passed (skipped rules count as not passed: CI must notice them). */
  passed: boolean;
  counts: Record<RuleStatus, number>;
  rules: RuleResult[];
}

export function reportOf(url: string, rules: RuleResult[]): ConformanceReport {
  const counts: Record<RuleStatus, number> = { pass: 0, fail: 0, skipped: 0 };
  for (const rule of rules) {
    counts[rule.status] += 1;
  }
  return {
    url,
    checkedAt: new Date().toISOString(),
    passed: rules.length > 0 && counts.pass === rules.length,
    counts,
    rules,
  };
}

export const pass = (id: string, title: string, message: string): RuleResult => ({
  id,
  title,
  status: 'pass',
  message,
});

export const fail = (id: string, title: string, message: string, hint: string): RuleResult => ({
  id,
  title,
  status: 'fail',
  message,
  hint,
});

export const skipped = (id: string, title: string, reason: string): RuleResult => ({
  id,
  title,
  status: 'skipped',
  message: reason,
});
