import { rmSync } from 'node:fs';
import path from 'node:path';
import type { RunningPostgres } from '../../scripts/runtime/postgres.js';
import type { RunningStripeMock } from '../../scripts/runtime/stripe-mock.js';
import type { RunningTemporal } from '../../scripts/runtime/temporal.js';
import { contractDir, summarize } from './contract-recorder.js';

export default async function globalTeardown(): Promise<void> {
  const runtime = (globalThis as Record<string, unknown>).__agentsiteRuntime as
    | {
        postgres: RunningPostgres;
        temporal: RunningTemporal;
        stripeMock: RunningStripeMock | undefined;
        workDir: string;
      }
    | undefined;
  if (runtime === undefined) {
    return;
  }
  const summary = summarize(contractDir() ?? '', path.resolve('.data', 'contract-summary.txt'));
  if (summary !== undefined) {
    console.log(summary);
  }
  await runtime.stripeMock?.stop();
  await runtime.temporal.stop();
  await runtime.postgres.stop();
  if (process.env.AGENTSITE_KEEP_TEST_DIR !== '1') {
    rmSync(runtime.workDir, { recursive: true, force: true });
  }
}
