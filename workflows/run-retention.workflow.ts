import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const retention = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Batches one execution deletes before it continues as new (keeps its history short). */
const BATCHES_PER_EXECUTION = 100;

/**
 * What the run retention Schedule starts daily (RUN_RETENTION_DAYS): deletes ended runs older than
 * the retention, a batch per activity, until none is left.
 */
export async function runRetentionWorkflow(): Promise<{ deleted: number }> {
  let deleted = 0;
  for (let batch = 0; batch < BATCHES_PER_EXECUTION; batch += 1) {
    const result = await retention.deleteExpiredRuns();
    deleted += result.deleted;
    if (!result.more) {
      return { deleted };
    }
  }
  return continueAsNew<typeof runRetentionWorkflow>();
}
