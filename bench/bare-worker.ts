/**
 * The bare side's worker: the bare workflows (bare.workflow.ts), the service's payload codec, and the
 * SDK's defaults, like the service's worker without the service. Benchmarks 7 and 8 run it in the
 * bench's process with the bare activities; benchmark 5's floor runs it in a process of its own:
 * `node dist/bench/bare-worker.js <temporal address> <task queue>` prints `ready` once it polls (with
 * the bare activities when BARE_ACTIVITIES gives their options).
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { createBareActivities } from './bare.activities.js';
import { testDataConverter } from '../test/utils/temporal.js';

/** Connects and builds the bare worker; `stop()` shuts it down and closes its connection. */
export async function startBareWorker(
  address: string,
  taskQueue: string,
  activities?: ReturnType<typeof createBareActivities>,
): Promise<{ running: Promise<void>; stop: () => Promise<void> }> {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./bare.workflow.js', import.meta.url)),
    dataConverter: testDataConverter(),
    ...(activities !== undefined ? { activities } : {}),
  });
  const running = worker.run().finally(() => connection.close());
  return {
    running,
    stop: async () => {
      worker.shutdown();
      await running;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [address, taskQueue] = process.argv.slice(2);
  // BARE_ACTIVITIES: the bare activities' options as JSON (benchmark 5w's floor makes a model call).
  // Imported only then: benchmark 5's idle floor loads no more than a worker.
  const options = process.env.BARE_ACTIVITIES;
  const activities =
    options === undefined
      ? undefined
      : (await import('./bare.activities.js')).createBareActivities(
          JSON.parse(options) as Parameters<typeof createBareActivities>[0],
        );
  startBareWorker(address!, taskQueue!, activities).then(
    ({ running, stop }) => {
      console.log('ready');
      process.once('SIGTERM', () => void stop());
      return running.then(() => process.exit(0));
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
