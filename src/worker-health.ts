/**
 * The worker's health check (docker-compose.yml runs it in the worker's container):
 * `node dist/src/worker-health.js [--max-age-seconds=N]` exits 0 when Temporal saw a worker of this
 * host poll both the workflow and the activity side of the task queue recently, 1 otherwise. A process
 * that is alive but cannot poll (Temporal unreachable, credentials refused) is thereby unhealthy.
 */
import { hostname } from 'node:os';
import { Connection } from '@temporalio/client';
import { loadSettings, SettingsError } from './config/settings.js';
import { DEFAULT_POLL_MAX_AGE_MS, judgePollers, timestampMs } from './temporal/poller-health.js';
import { temporalConnectionOptions } from './temporal/temporal-connection.js';

const TASK_QUEUE_TYPES = [
  [1, 'workflow'],
  [2, 'activity'],
] as const;

async function main(): Promise<number> {
  const maxAgeArg = process.argv.find((arg) => arg.startsWith('--max-age-seconds='));
  const maxAgeMs = maxAgeArg === undefined ? DEFAULT_POLL_MAX_AGE_MS : Number(maxAgeArg.split('=')[1]) * 1000;
  if (!Number.isFinite(maxAgeMs) || maxAgeMs <= 0) {
    console.error('--max-age-seconds must be a positive number');
    return 2;
  }
  const settings = loadSettings();
  // The worker's own way in (TLS, API key), so the check passes exactly when the worker can poll.
  const connection = await Connection.connect({ ...temporalConnectionOptions(settings), connectTimeout: '5 seconds' });
  try {
    const host = hostname();
    const seen: string[] = [];
    for (const [taskQueueType, side] of TASK_QUEUE_TYPES) {
      const queue = await connection.withDeadline(Date.now() + 5_000, () =>
        connection.workflowService.describeTaskQueue({
          namespace: settings.temporalNamespace,
          taskQueue: { name: settings.temporalTaskQueue },
          taskQueueType,
        }),
      );
      const verdict = judgePollers(
        (queue.pollers ?? []).map((poller) => ({
          identity: poller.identity,
          lastAccessMs: timestampMs(poller.lastAccessTime as never),
        })),
        host,
        Date.now(),
        maxAgeMs,
      );
      if (!verdict.healthy) {
        console.error(`unhealthy: ${side} tasks of "${settings.temporalTaskQueue}": ${verdict.reason}`);
        return 1;
      }
      seen.push(`${side} ${Math.round(verdict.ageMs / 1000)} s ago`);
    }
    console.log(`healthy: ${host} polled "${settings.temporalTaskQueue}" (${seen.join(', ')})`);
    return 0;
  } finally {
    await connection.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(
      `unhealthy: ${err instanceof SettingsError ? err.message : err instanceof Error ? err.message : String(err)}`,
    );
    process.exit(1);
  },
);
