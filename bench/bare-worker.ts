/**
 * Benchmark 5's floor: a worker in a process of its own with the bare workflows (bare.workflow.ts),
 * the service's payload codec, and the SDK's defaults, like the service's worker without the service.
 * `node dist/bench/bare-worker.js <temporal address> <task queue>` prints `ready` once it polls.
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { testDataConverter } from '../test/utils/temporal.js';

async function main(address: string, taskQueue: string): Promise<void> {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./bare.workflow.js', import.meta.url)),
    dataConverter: testDataConverter(),
  });
  const running = worker.run();
  console.log('ready');
  process.once('SIGTERM', () => worker.shutdown());
  await running;
  await connection.close();
}

const [address, taskQueue] = process.argv.slice(2);
main(address!, taskQueue!).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
