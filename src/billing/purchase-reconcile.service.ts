import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Client } from '@temporalio/client';
import { SETTINGS } from '../config/settings.module.js';
import type { Settings } from '../config/settings.js';
import { type ScheduleSync, syncMaintenanceSchedule } from '../temporal/maintenance-schedule.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import type { PurchaseCursor, ReconcilePurchasesResult } from '../../activities/purchases.js';
import { workflowIds } from '../../workflows/contracts.js';
import { BillingRepository } from './billing.repository.js';
import { BillingService, RECONCILE_AFTER_MS } from './billing.service.js';

/** Purchases one activity looks up at most (each is a call to Stripe, a few hundred ms). */
export const PURCHASE_RECONCILE_BATCH = 25;
/**
 * Every 5 minutes: a purchase whose event went missing is granted within minutes of its look-up
 * age (RECONCILE_AFTER_MS), and a quiet firing costs one indexed query (no pending purchase, no call).
 */
const PURCHASE_RECONCILE_INTERVAL = '5 minutes';
/** Missed firings (Temporal or the workers down) run once on their return; one catches everything up. */
const PURCHASE_RECONCILE_CATCHUP_WINDOW = '10 minutes';

/**
 * The purchase reconciler: a Temporal Schedule (with Stripe configured) starting
 * purchaseReconcileWorkflow, whose activity looks up every user's purchases still pending at the
 * provider in bounded batches, oldest first, and settles them as the user's read does
 * (BillingService.reconcileOne: the webhook's path, so the credits are granted once).
 */
@Injectable()
export class PurchaseReconcileService {
  private readonly logger = new Logger('PurchaseReconcile');

  constructor(
    private readonly billing: BillingRepository,
    private readonly service: BillingService,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  get scheduleId(): string {
    return workflowIds.purchaseReconcile(this.settings.temporalTaskQueue);
  }

  /** Scheduled with PAYMENT_PROVIDER=stripe, removed otherwise (the worker calls it at every start). */
  syncSchedule(): Promise<ScheduleSync> {
    return syncMaintenanceSchedule(
      this.client,
      this.scheduleId,
      this.settings.paymentProvider !== 'stripe'
        ? undefined
        : {
            scheduleId: this.scheduleId,
            workflowType: 'purchaseReconcileWorkflow',
            taskQueue: this.settings.temporalTaskQueue,
            spec: { intervals: [{ every: PURCHASE_RECONCILE_INTERVAL }] },
            note: 'settles card purchases still pending (a missed Stripe webhook) by asking Stripe',
            catchupWindow: PURCHASE_RECONCILE_CATCHUP_WINDOW,
          },
    );
  }

  /**
   * One batch: the pending purchases made more than RECONCILE_AFTER_MS ago, after `after`, oldest
   * first. The cursor only moves forward, so a purchase Stripe still calls processing is not asked
   * twice in one firing.
   */
  async reconcileBatch(
    after: PurchaseCursor | undefined,
    limit = PURCHASE_RECONCILE_BATCH,
    now = new Date(),
  ): Promise<ReconcilePurchasesResult> {
    const cursor = after === undefined ? undefined : { createdAt: new Date(after.createdAt), id: after.id };
    const stale = await this.billing.stalePendingPurchases(new Date(now.getTime() - RECONCILE_AFTER_MS), limit, cursor);
    let settled = 0;
    for (const purchase of stale) {
      const outcome = await this.service.reconcileOne(purchase, now, 'schedule');
      if (outcome === 'succeeded' || outcome === 'failed') {
        settled += 1;
      }
    }
    if (stale.length > 0) {
      this.logger.log({ message: 'pending purchases looked up', looked: stale.length, settled });
    }
    const last = stale[stale.length - 1];
    return {
      looked: stale.length,
      settled,
      next:
        stale.length < limit || last === undefined ? null : { createdAt: last.createdAt.toISOString(), id: last.id },
    };
  }
}
