import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { BillingRepository } from './billing.repository.js';

/**
 * A pending purchase older than this is stuck: its payment's event comes within seconds, and by then
 * the reconciler (every 5 minutes) has looked it up at least twice.
 */
export const STUCK_PURCHASE_MS = 15 * 60_000;

/** How a look-up of a pending purchase at the provider ended. */
export type ReconcileOutcome = 'succeeded' | 'failed' | 'still_pending' | 'already_settled' | 'error';
/** Who asked: the schedule's batch, or the user reading their billing. */
export type ReconcileVia = 'schedule' | 'read';

/**
 * The card purchases' metrics for operators, on the process's registry: the pending ones (a count of
 * the database at each scrape, recent or stuck, and the age of the oldest) and the look-ups that
 * settled them.
 */
@Injectable()
export class PurchaseMetrics {
  readonly reconciled: Counter<'outcome' | 'via'>;

  constructor(metrics: MetricsService, billing: BillingRepository) {
    this.reconciled = new Counter({
      name: 'agentsite_card_purchases_reconciled_total',
      help: 'Pending purchases looked up at the payment provider (a missed event), by outcome and by who asked (schedule, read)',
      labelNames: ['outcome', 'via'] as const,
      registers: [metrics.registry],
    });
    // One query per scrape for both gauges (a scrape collects them at once).
    let snapshot: Promise<{ pending: number; stuck: number; oldestSeconds: number }> | undefined;
    const stats = () => {
      snapshot ??= (async () => {
        const now = Date.now();
        const found = await billing.pendingStats(new Date(now - STUCK_PURCHASE_MS));
        const oldestSeconds = found.oldest === null ? 0 : Math.max(0, (now - found.oldest.getTime()) / 1000);
        return { pending: found.pending, stuck: found.stuck, oldestSeconds };
      })().finally(() => setTimeout(() => (snapshot = undefined), 1000).unref());
      return snapshot;
    };
    new Gauge({
      name: 'agentsite_card_purchases_pending',
      help: `Purchases still pending, by age: recent, or stuck (older than ${STUCK_PURCHASE_MS / 60_000} minutes)`,
      labelNames: ['age'] as const,
      registers: [metrics.registry],
      async collect() {
        const now = await stats();
        this.set({ age: 'recent' }, now.pending - now.stuck);
        this.set({ age: 'stuck' }, now.stuck);
      },
    });
    new Gauge({
      name: 'agentsite_card_purchases_oldest_pending_seconds',
      help: 'Age of the oldest purchase still pending (0 when none)',
      registers: [metrics.registry],
      async collect() {
        this.set((await stats()).oldestSeconds);
      },
    });
  }
}
