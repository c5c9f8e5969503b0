import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PurchaseCursor } from '../activities/purchases.js';

const purchases = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Batches one execution runs before it continues as new (keeps its history short). */
const BATCHES_PER_EXECUTION = 50;

/**
 * What the purchase reconciler's Schedule starts (every 5 minutes, with Stripe configured): looks up
 * the card purchases still pending well after their charge at Stripe, oldest first, a bounded batch
 * per activity, and settles them through the webhook's path; each purchase once per firing.
 */
export async function purchaseReconcileWorkflow(after?: PurchaseCursor): Promise<{ looked: number; settled: number }> {
  let cursor = after;
  let looked = 0;
  let settled = 0;
  for (let batch = 0; batch < BATCHES_PER_EXECUTION; batch += 1) {
    const result = await purchases.reconcilePendingPurchases(cursor);
    looked += result.looked;
    settled += result.settled;
    if (result.next === null) {
      return { looked, settled };
    }
    cursor = result.next;
  }
  return continueAsNew<typeof purchaseReconcileWorkflow>(cursor);
}
