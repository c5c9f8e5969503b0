import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ReconcileRunsCursor } from './contracts.js';

const reconcile = proxyActivities<Activities>({
  // A batch makes one Temporal call per workflow it looks at, and reads the histories it archives; no
  // longer than the worker's longest activity (LONGEST_ACTIVITY_TIMEOUT_SECONDS: its shutdown drains it).
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Batches one execution goes through before it continues as new (keeps its history short). */
const BATCHES_PER_EXECUTION = 100;

/**
 * What the run reconciler Schedule starts (every few minutes): goes once through the runs that may
 * have ended without an archive, a bounded batch per activity, each batch going on from where the
 * last one stopped, until none is left.
 */
export async function runReconcileWorkflow(
  from: ReconcileRunsCursor | null = null,
): Promise<{ examined: number; reconciled: number }> {
  let cursor = from;
  let examined = 0;
  let reconciled = 0;
  for (let batch = 0; batch < BATCHES_PER_EXECUTION; batch += 1) {
    const result = await reconcile.reconcileRuns(cursor);
    examined += result.examined;
    reconciled += result.reconciled;
    if (result.next === null) {
      return { examined, reconciled };
    }
    cursor = result.next;
  }
  return continueAsNew<typeof runReconcileWorkflow>(cursor);
}
