#!/usr/bin/env node
/**
 * `agentsite-check <site URL>`: the conformance rules of src/conformance/ run from a site author's
 * machine (`npx agentsite-check …` in a checkout, after `npm run build`). The same checks are behind
 * `POST /api/conformance/check`. Exit status: 0 when every rule passed, 1 when one failed or was
 * skipped, 2 for a bad command line.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ConformanceReport, RuleResult } from '../src/conformance/conformance-report.js';
import { checkSite } from '../src/conformance/site-checker.js';
import { SiteHttpClient } from '../src/sites/site-http.js';

const USAGE = `usage: agentsite-check <site URL> [options]
  --token <token>          bearer token of a test account (tool calls)
  --user <name>            test account to sign in with at an OAuth consent page (the page's user
                           name + password form is filled and approved, and posted only to the
                           authorization server's origin); its password comes from the environment
                           variable AGENTSITE_CHECK_PASSWORD, or from standard input with:
  --password-stdin         read the password from the first line of standard input
  --client-id <id>         OAuth client id the site registered for agentsite (default: agentsite)
  --redirect-uri <uri>     the redirect URI registered for it, matched exactly
                           (default: http://localhost:3000/api/oauth/callback, a local npm start)
  --ca <file>              PEM file of extra CA certificates to trust, like SITE_CA_CERTS
  --allow-private          allow loopback and private addresses (a local copy of the site);
                           agentsite itself refuses them. Link-local and cloud metadata addresses
                           (169.254.0.0/16, fe80::/10, fd00:ec2::254, metadata.google.internal)
                           stay refused
  --burst <n>              calls at most to provoke a 429 (default: 100)
  --json                   print the report as JSON (for CI)
The tool calls have effects (each tool is called with a sample input): use a test account.`;

/** Where the test account's password comes from without --password-stdin (never the command line: ps shows it). */
export const PASSWORD_ENV = 'AGENTSITE_CHECK_PASSWORD';

const DEFAULT_BURST = 100;
const MAX_BURST = 10_000;

class UsageError extends Error {}

/** `--help`: the usage on standard output, exit 0. */
class HelpRequested extends Error {}

interface Command {
  url: string;
  json: boolean;
  ca: string | undefined;
  allowPrivate: boolean;
  token: string | undefined;
  account: { username: string; password: string } | undefined;
  clientId: string;
  redirectUri: string;
  burst: number;
}

/** The first line of standard input, without its line ending. */
async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += String(chunk);
    if (text.includes('\n')) {
      break;
    }
  }
  return text.split(/\r?\n/)[0] ?? '';
}

async function parseCommand(argv: string[], env: NodeJS.ProcessEnv, stdin: NodeJS.ReadableStream): Promise<Command> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      token: { type: 'string' },
      user: { type: 'string' },
      // Refused with its own message (below): a password in argv is visible to every user of the machine.
      password: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
      'client-id': { type: 'string', default: 'agentsite' },
      'redirect-uri': { type: 'string', default: 'http://localhost:3000/api/oauth/callback' },
      ca: { type: 'string' },
      'allow-private': { type: 'boolean', default: false },
      burst: { type: 'string', default: String(DEFAULT_BURST) },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    throw new HelpRequested();
  }
  if (positionals.length !== 1) {
    throw new UsageError('give exactly one site URL');
  }
  if (values.password !== undefined) {
    throw new UsageError(
      `--password is no longer accepted (a command line is visible to other users, e.g. in ps): set ${PASSWORD_ENV} or use --password-stdin`,
    );
  }
  if (values['password-stdin'] && values.user === undefined) {
    throw new UsageError('--password-stdin goes with --user');
  }
  const burst = Number(values.burst);
  if (!Number.isInteger(burst) || burst < 1 || burst > MAX_BURST) {
    throw new UsageError(`--burst must be a whole number from 1 to ${MAX_BURST}`);
  }
  if (values.ca !== undefined && !existsSync(values.ca)) {
    throw new UsageError(`--ca: no file ${values.ca}`);
  }
  try {
    new URL(values['redirect-uri']);
  } catch {
    throw new UsageError('--redirect-uri is not a URL');
  }
  let password: string | undefined;
  if (values.user !== undefined) {
    password = values['password-stdin'] ? await readFirstLine(stdin) : env[PASSWORD_ENV];
    if (password === undefined || password === '') {
      throw new UsageError(
        `--user needs its password: set ${PASSWORD_ENV}, or pass --password-stdin and give it on standard input`,
      );
    }
  }
  return {
    url: positionals[0]!,
    json: values.json,
    ca: values.ca,
    allowPrivate: values['allow-private'],
    token: values.token,
    account: values.user !== undefined && password !== undefined ? { username: values.user, password } : undefined,
    clientId: values['client-id'],
    redirectUri: values['redirect-uri'],
    burst,
  };
}

const MARK: Record<RuleResult['status'], string> = { pass: 'PASS', fail: 'FAIL', skipped: 'SKIP' };

/** The report as a table: status, rule, what was seen; a fix hint under each failure. */
export function formatTable(report: ConformanceReport): string {
  const width = Math.min(40, Math.max(...report.rules.map((r) => r.id.length), 4));
  const lines = [`agentsite conformance of ${report.url}`, '', `${'    '}  ${'RULE'.padEnd(width)}  RESULT`];
  for (const rule of report.rules) {
    lines.push(`${MARK[rule.status]}  ${rule.id.padEnd(width)}  ${rule.title}: ${rule.message}`);
    if (rule.hint !== undefined) {
      lines.push(`${' '.repeat(6 + width)}  fix: ${rule.hint}`);
    }
  }
  const { pass, fail, skipped } = report.counts;
  lines.push('', `${pass} passed, ${fail} failed, ${skipped} skipped`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  let command: Command;
  try {
    command = await parseCommand(process.argv.slice(2), process.env, process.stdin);
  } catch (err) {
    if (err instanceof HelpRequested) {
      console.log(USAGE);
      return 0;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(err instanceof Error && err.message !== '' ? `agentsite-check: ${err.message}\n${USAGE}` : USAGE);
      return 2;
    }
    throw err;
  }
  const http = new SiteHttpClient({
    siteCaCerts: command.ca,
    siteAllowPrivateHosts: [],
    allowPrivateAddresses: command.allowPrivate,
  });
  try {
    const report = await checkSite(http, {
      url: command.url,
      token: command.token,
      account: command.account,
      clientId: command.clientId,
      redirectUri: command.redirectUri,
      burst: command.burst,
    });
    console.log(command.json ? JSON.stringify(report, null, 2) : formatTable(report));
    return report.passed ? 0 : 1;
  } finally {
    http.onModuleDestroy();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`agentsite-check: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
