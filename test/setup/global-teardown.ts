import { rmSync } from 'node:fs';
import type { RunningPostgres } from '../../scripts/runtime/postgres.js';
import type { RunningTemporal } from '../../scripts/runtime/temporal.js';

export default async function globalTeardown(): Promise<void> {
  const runtime = (globalThis as Record<string, unknown>).__agentsiteRuntime as
    { postgres: RunningPostgres; temporal: RunningTemporal; workDir: string } | undefined;
  if (runtime === undefined) {
    return;
  }
  await runtime.temporal.stop();
  await runtime.postgres.stop();
  if (process.env.AGENTSITE_KEEP_TEST_DIR !== '1') {
    rmSync(runtime.workDir, { recursive: true, force: true });
  }
}
