/**
 * `npm test`: runs every jest suite (unit and end-to-end; the global setup starts PostgreSQL and
 * Temporal), then prints the plain closing line `N passed, N failed` that CI reads.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

interface JestResults {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  numRuntimeErrorTestSuites: number;
  success: boolean;
}

async function main(): Promise<number> {
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
