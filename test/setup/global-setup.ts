import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../scripts/runtime/postgres.js';
import { freePort } from '../../scripts/runtime/processes.js';
import { ensureTemporalCli, startTemporalDevServer } from '../../scripts/runtime/temporal.js';
import { ensureChromium } from '../../scripts/runtime/chromium.js';
import { TEST_ENV } from './shared-runtime.js';

/** Starts one real PostgreSQL and one real Temporal dev server for the whole test run. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const workDir = mkdtempSync(path.join(tmpdir(), 'agentsite-test-'));
  chmodSync(workDir, 0o755);
  const log = (line: string): void => console.log(`[test-setup] ${line}`);

  const cliPath = await ensureTemporalCli(log);
  // Obtained once here (an apt-get must not run twice at once); a failure fails the browser suites
  // with its message, not the others.
  const chromium = ensureChromium(log).then(
    (file) => {
      process.env[TEST_ENV.chromium] = file;
    },
    (err: unknown) => {
      process.env[TEST_ENV.chromiumProblem] = err instanceof Error ? err.message : String(err);
    },
  );
  const [postgres, temporal] = await Promise.all([
    freePort().then((port) => startEmbeddedPostgres({ dir: path.join(workDir, 'postgres'), port, fast: true })),
    freePort().then((port) =>
      startTemporalDevServer({ cliPath, port, namespace: 'default', logFile: path.join(workDir, 'temporal.log') }),
    ),
  ]);
  await chromium;
  process.env[TEST_ENV.databaseUrl] = postgres.url;
  process.env[TEST_ENV.temporalAddress] = temporal.address;
  process.env[TEST_ENV.temporalCli] = cliPath;
  process.env[TEST_ENV.workDir] = workDir;
  (globalThis as Record<string, unknown>).__agentsiteRuntime = { postgres, temporal, workDir };
  log(
    `PostgreSQL ${postgres.url.replace(/:[^:@]+@/, ':***@')}, Temporal ${temporal.address}, in ${Date.now() - started} ms`,
  );
}
