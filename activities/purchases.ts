import { Context } from '@temporalio/activity';
import { classified } from './failures.js';

/** Where a batch of the purchase reconciler stopped: the last purchase it looked at (ids and a time only). */
export interface PurchaseCursor {
  createdAt: string;
  id: string;
}

/** One batch of the purchase reconciler: what it settled, and where the next batch starts (null: done). */
export interface ReconcilePurchasesResult {
  looked: number;
  settled: number;
  next: PurchaseCursor | null;
}

/** The card purchases still pending, filled by the worker with PurchaseReconcileService. */
export interface PurchasesPort {
  /** Looks up one bounded batch of pending purchases at the provider, oldest first, after `after`. */
  reconcileBatch(after: PurchaseCursor | undefined): Promise<ReconcilePurchasesResult>;
}

/** The purchase reconciler's activity (workflows/purchase-reconcile.workflow.ts runs it), over its port. */
export function purchaseActivities(deps: { purchases?: PurchasesPort }) {
  return {
    async reconcilePendingPurchases(after?: PurchaseCursor): Promise<ReconcilePurchasesResult> {
      Context.current().log.info('reconcilePendingPurchases');
      const port = deps.purchases;
      if (port === undefined) {
        // A worker built without billing (tests' workers): nothing to look up.
        return { looked: 0, settled: 0, next: null };
      }
      return classified(() => port.reconcileBatch(after));
    },
  };
}
