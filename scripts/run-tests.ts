/**
 * `npm test`: runs every jest suite (unit and end-to-end; the global setup starts PostgreSQL and
 * Temporal), then prints the plain closing line `N passed, N failed` that CI reads.
 *
 * On the pinned Node (.node-version): run by hand on a machine whose Node is older, it runs itself
 * again on the pinned one, as `npm test` does (scripts/pinned-node.mjs).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const USAGE = `usage: node dist/scripts/run-tests.js [jest arguments...]
  (npm test builds, lints, then runs this; npm run test:unit runs it with --config jest.unit.config.js)
Runs jest on the compiled tests on the pinned Node, then prints "N passed, N failed".
  node dist/scripts/run-tests.js dist/test/e2e/<name>.e2e-spec.js -t "<test name>"
  --save-durations  after the run, writes each suite's duration into test/setup/suite-durations.json
                    (the order the suites start in, longest first: test/setup/sequencer.ts); run it
                    on the whole suite, on a machine without other load, and commit the file`;

/** The committed durations that order the suites (test/setup/sequencer.ts reads them). */
const DURATIONS_FILE = path.join('test', 'setup', 'suite-durations.json');

interface SuiteResult {
  name: string;
  startTime: number;
  endTime: number;
}

/** Merges the run's suite durations (seconds, 0.1 s) into the committed list, keyed by path under dist/. */
function saveDurations(suites: SuiteResult[]): void {
  let durations: Record<string, number> = {};
  try {
    durations = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    // No list yet: this run starts it.
  }
  const dist = path.resolve('dist');
  for (const suite of suites) {
    const key = path.relative(dist, suite.name).split(path.sep).join('/');
    durations[key] = Math.round((suite.endTime - suite.startTime) / 100) / 10;
  }
  const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`${suites.length} suite durations written to ${DURATIONS_FILE}`);
}

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
  testResults: SuiteResult[];
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
  const save = process.argv.includes('--save-durations');
  const args = [
    '--experimental-vm-modules',
    jestBin,
    '--json',
    `--outputFile=${resultsFile}`,
    ...process.argv.slice(2).filter((arg) => arg !== '--save-durations'),
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
  if (save) {
    saveDurations(results.testResults);
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
