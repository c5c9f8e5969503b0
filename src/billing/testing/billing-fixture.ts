import { standIn } from '../../common/testing/stand-in.js';
import { creditsFixture } from '../../credits/testing/credits-fixture.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { BillingEventsService } from '../billing-events.service.js';
import type { BillingRepository } from '../billing.repository.js';
import { BillingService } from '../billing.service.js';
import { PurchaseMetrics } from '../purchase-metrics.js';
import { TierOverrideService } from '../tier-override.service.js';
import { FakeBillingRepository } from './fake-billing.repository.js';
import { FakePaymentProvider } from './fake-payment-provider.js';

export const USER = '0b3f1c1e-0000-4000-8000-000000000001';

/** Billing over fakes: its rows, the credits it grants (the real CreditsService on its fake rows), the provider. */
export function billingFixture(options: { configured?: boolean; balance?: number } = {}) {
  const rows = new FakeBillingRepository();
  const { rows: creditRows, service: credits } = creditsFixture({ [USER]: options.balance ?? 0 });
  rows.balanceOf = (userId) => creditRows.balances.get(userId) ?? 0;
  rows.seedUser({ id: USER });
  const provider = new FakePaymentProvider(options.configured ?? true);
  const metrics = new MetricsService();
  const billing = standIn<BillingRepository>(rows);
  const service = new BillingService(billing, provider, credits, metrics, new PurchaseMetrics(metrics, billing));
  const events = new BillingEventsService(
    billing,
    service,
    provider,
    metrics,
    new TierOverrideService(billing, credits),
  );
  return { rows, creditRows, provider, metrics, service, events };
}
