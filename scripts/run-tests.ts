/**
 * `npm test`: runs every jest suite (unit and end-to-end; the global setup starts PostgreSQL and
 * Temporal), then prints the plain closing line `N passed, N failed` that CI reads.
 *
 * On the pinned Node (.node-version): run by hand on a machine whose Node is older, it runs itself
 * again on the pinned one, as `npm test` does (scripts/pinned-node.mjs).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const USAGE = `usage: node dist/scripts/run-tests.js [jest arguments...]
  (npm test builds, lints, then runs this; npm run test:unit runs it with --config jest.unit.config.js)
Runs jest on the compiled tests on the pinned Node, then prints "N passed, N failed".
  node dist/scripts/run-tests.js dist/test/e2e/<name>.e2e-spec.js -t "<test name>"`;

type PinnedNode = { pinnedNodeEnv(): NodeJS.ProcessEnv | undefined };

/** Runs this script again on the pinned Node when this one is older; the exit code, or undefined to go on here. */
async function onPinnedNode(): Promise<number | undefined> {
  const launcher = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/pinned-node.mjs');
  const { pinnedNodeEnv } = (await import(pathToFileURL(launcher).href)) as PinnedNode;
  const env = pinnedNodeEnv();
  if (env === undefined) {
    return undefined;
  }
  return new Promise<number>((resolve) => {
    const child = spawn('node', process.argv.slice(1), { stdio: 'inherit', env });
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
}

interface JestResults {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  numRuntimeErrorTestSuites: number;
  success: boolean;
}

async function main(): Promise<number> {
  if (process.argv.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  const relaunched = await onPinnedNode();
  if (relaunched !== undefined) {
    return relaunched;
  }
  const require = createRequire(import.meta.url);
  const jestBin = require.resolve('jest/bin/jest');
  const resultsDir = path.resolve('.data');
  mkdirSync(resultsDir, { recursive: true });
  const resultsFile = path.join(resultsDir, 'jest-results.json');
  rmSync(resultsFile, { force: true });
  const args = [
    '--experimental-vm-modules',
    jestBin,
    '--json',
    `--outputFile=${resultsFile}`,
    ...process.argv.slice(2),
  ];
  const code = await new Promise<number>((resolve) => {
    // The response contract check is strict unless CONTRACT_CHECK says otherwise (test/utils/contract.ts).
    const env = { ...process.env, NODE_NO_WARNINGS: '1' };
    const child = spawn(process.execPath, args, { stdio: 'inherit', env });
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  let results: JestResults;
  try {
    results = JSON.parse(readFileSync(resultsFile, 'utf8')) as JestResults;
  } catch {
    console.log('0 passed, 1 failed');
    console.error('jest wrote no results (it failed before running tests)');
    return code === 0 ? 1 : code;
  }
  const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
  const skipped = results.numPendingTests > 0 ? `, ${results.numPendingTests} skipped` : '';
  console.log(`${results.numPassedTests} passed, ${failed} failed${skipped}`);
  if (results.numTotalTests === 0) {
    console.error('no test ran');
    return 1;
  }
  return failed > 0 || !results.success ? Math.max(code, 1) : code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
