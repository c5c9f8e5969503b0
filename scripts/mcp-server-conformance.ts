#!/usr/bin/env node
/**
 * The official MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance server`)
 * against agentsite's /mcp endpoint. The suite cannot send a token: this command starts a forwarding
 * proxy on a loopback port that adds `Authorization: Bearer $MCP_CONFORMANCE_TOKEN` to each request
 * (scripts/mcp-server-conformance/proxy.ts) and points the suite at it; the endpoint itself has no
 * unauthenticated mode. Without --scenario it runs the scenarios for the features agentsite offers
 * (scripts/mcp-server-conformance/scenarios.ts, where the others are listed with the reason they are
 * left out). Exit status: 0 when every scenario passed, 1 otherwise, 2 for a bad command line.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OFFERED } from './mcp-server-conformance/scenarios.js';
import { startBearerProxy } from './mcp-server-conformance/proxy.js';

const USAGE = `usage: node dist/scripts/mcp-server-conformance.js --url <MCP endpoint URL> [--scenario <name>]... [-o <dir>]
  Runs the MCP conformance suite's server scenarios against agentsite's endpoint ({PUBLIC_BASE_URL}/mcp).
  MCP_CONFORMANCE_TOKEN (required): the bearer token to send, an access token issued to an MCP client
  (or, on a service with MCP_ALLOW_API_TOKENS=true, an API token). A proxy on a loopback port adds it
  to every request the suite makes; nothing else is changed.
  --scenario <name>  a scenario to run (repeatable); default: every scenario for a feature agentsite offers
  -o <dir>           where the suite writes each scenario's checks.json
  Exit status: 0 when every scenario passed, 1 otherwise.`;

interface Options {
  url: URL;
  scenarios: string[];
  outputDir: string | undefined;
  token: string;
}

function parse(argv: string[], env: NodeJS.ProcessEnv): Options | 'help' | string {
  if (argv.includes('--help') || argv.includes('-h')) {
    return 'help';
  }
  let url: string | undefined;
  let outputDir: string | undefined;
  const scenarios: string[] = [];
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) {
      return `${flag} needs a value`;
    }
    if (flag === '--url') {
      url = value;
    } else if (flag === '--scenario') {
      scenarios.push(value);
    } else if (flag === '-o' || flag === '--output-dir') {
      outputDir = value;
    } else {
      return `unknown option ${flag}`;
    }
  }
  if (url === undefined || !URL.canParse(url)) {
    return 'give the endpoint with --url';
  }
  if (!env.MCP_CONFORMANCE_TOKEN) {
    return 'set MCP_CONFORMANCE_TOKEN to the bearer token to send';
  }
  return {
    url: new URL(url),
    scenarios: scenarios.length > 0 ? scenarios : [...OFFERED],
    outputDir,
    token: env.MCP_CONFORMANCE_TOKEN,
  };
}

const SUITE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);

/** Runs one scenario through the suite against `url`; resolves with the suite's exit status. */
function runSuite(url: string, scenario: string, outputDir: string | undefined): Promise<number | null> {
  const args = [SUITE, 'server', '--url', url, '--scenario', scenario, ...(outputDir ? ['-o', outputDir] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

async function main(): Promise<number> {
  const parsed = parse(process.argv.slice(2), process.env);
  if (parsed === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (typeof parsed === 'string') {
    console.error(`${parsed}\n${USAGE}`);
    return 2;
  }
  const proxy = await startBearerProxy(parsed.url, parsed.token);
  const through = `${proxy.origin}${parsed.url.pathname}${parsed.url.search}`;
  const failed: string[] = [];
  try {
    for (const scenario of parsed.scenarios) {
      if ((await runSuite(through, scenario, parsed.outputDir)) !== 0) {
        failed.push(scenario);
      }
    }
  } finally {
    await proxy.close();
  }
  console.log(failed.length === 0 ? 'every scenario passed' : `failed: ${failed.join(', ')}`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
