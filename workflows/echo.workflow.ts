import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.js';
import type { EchoInput, EchoOutput } from './contracts.js';

const { echo } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** A round trip through a workflow and an activity: proves a worker is serving the task queue. */
export async function echoWorkflow(input: EchoInput): Promise<EchoOutput> {
  return echo(input);
}
