import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../scripts/runtime/postgres.js';
import { freePort } from '../../scripts/runtime/processes.js';
import { ensureTemporalCli, startTemporalDevServer } from '../../scripts/runtime/temporal.js';
import { ensureChromium } from '../../scripts/runtime/chromium.js';
import { ensureStripeMock, startStripeMock, type RunningStripeMock } from '../../scripts/runtime/stripe-mock.js';
import { TEST_ENV } from './shared-runtime.js';

/**
 * The test run's Temporal server saves how far its history task queues got (their ack levels) every
 * second instead of every 30 s. Deleting a closed execution waits until the tasks of its close are
 * acknowledged, so run-history's deletions (a retention deleting Temporal's copy) took 20-35 s each;
 * nothing else of what the suites see depends on it.
 */
export const TEST_DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'history.transferProcessorUpdateAckInterval': '1s',
  'history.timerProcessorUpdateAckInterval': '1s',
  'history.visibilityProcessorUpdateAckInterval': '1s',
};

/** Starts one real PostgreSQL, one real Temporal dev server and one stripe-mock for the whole test run. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const workDir = mkdtempSync(path.join(tmpdir(), 'agentsite-test-'));
  chmodSync(workDir, 0o755);
  const log = (line: string): void => console.log(`[test-setup] ${line}`);

  // Beside the others, not after them; a failure fails the Stripe suites with its message, not the others.
  const stripeMock: Promise<RunningStripeMock | undefined> = ensureStripeMock(log)
    .then((file) => startStripeMock({ path: file, logFile: path.join(workDir, 'stripe-mock.log') }))
    .then(
      (running) => {
        process.env[TEST_ENV.stripeApiBase] = running.apiBase;
        return running;
      },
      (err: unknown) => {
        process.env[TEST_ENV.stripeProblem] =
          `stripe-mock is not available: ${err instanceof Error ? err.message : String(err)}`;
        return undefined;
      },
    );
  let cliPath: string;
  try {
    cliPath = await ensureTemporalCli(log);
  } catch (err) {
    await (await stripeMock)?.stop();
    throw err;
  }
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
  // PostgreSQL first, bound to its port before the Temporal dev server starts: the dev server picks
  // free ports of its own for its internal services, and one of those once took the port chosen for
  // PostgreSQL while both started at once ("Address already in use").
  let postgres: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  let temporal: Awaited<ReturnType<typeof startTemporalDevServer>>;
  try {
    postgres = await startEmbeddedPostgres({ dir: path.join(workDir, 'postgres'), port: await freePort(), fast: true });
    temporal = await startTemporalDevServer({
      cliPath,
      port: await freePort(),
      namespace: 'default',
      logFile: path.join(workDir, 'temporal.log'),
      extraDynamicConfig: TEST_DEV_SERVER_DYNAMIC_CONFIG,
    });
  } catch (err) {
    // Jest runs no teardown after a failed setup: what started would outlive the run.
    await postgres?.stop();
    await (await stripeMock)?.stop();
    throw err;
  }
  await chromium;
  const stripe = await stripeMock;
  process.env[TEST_ENV.databaseUrl] = postgres.url;
  process.env[TEST_ENV.temporalAddress] = temporal.address;
  process.env[TEST_ENV.temporalCli] = cliPath;
  process.env[TEST_ENV.workDir] = workDir;
  (globalThis as Record<string, unknown>).__agentsiteRuntime = { postgres, temporal, stripeMock: stripe, workDir };
  log(
    `PostgreSQL ${postgres.url.replace(/:[^:@]+@/, ':***@')}, Temporal ${temporal.address}, ` +
      `stripe-mock ${stripe?.apiBase ?? `unavailable (${process.env[TEST_ENV.stripeProblem]})`}, in ${Date.now() - started} ms`,
  );
}
