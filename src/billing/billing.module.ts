import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SETTINGS } from '../config/settings.module.js';
import type { Settings } from '../config/settings.js';
import { CreditsModule } from '../credits/credits.module.js';
import { UsersModule } from '../users/users.module.js';
import { BillingController } from './billing.controller.js';
import { BillingCustomerEntity, BillingEventEntity, CreditPurchaseEntity } from './billing.entities.js';
import { BillingEventsService } from './billing-events.service.js';
import { BillingRepository } from './billing.repository.js';
import { BillingService } from './billing.service.js';
import { NoPaymentProvider, PAYMENT_PROVIDER, type PaymentProvider, TestPaymentProvider } from './payment-provider.js';
import { PurchaseMetrics } from './purchase-metrics.js';
import { PurchaseReconcileService } from './purchase-reconcile.service.js';
import { StripePaymentProvider } from './stripe-payment-provider.js';
import { StripeWebhookController } from './stripe-webhook.controller.js';
import { TIER_LIMITS } from './tiers.js';
import { TierOverrideEntity } from './tier-override.entity.js';
import { TierOverrideService } from './tier-override.service.js';

/** The provider the settings name. */
export function paymentProviderFor(
  settings: Pick<Settings, 'paymentProvider' | 'allowTestPayments' | 'stripe'>,
): PaymentProvider {
  switch (settings.paymentProvider) {
    case 'test':
      // loadSettings refuses `test` without the allowance; checked again so no other path can skip it.
      return settings.allowTestPayments
        ? new TestPaymentProvider((tier) => TIER_LIMITS[tier].priceCents)
        : new NoPaymentProvider();
    case 'stripe':
      if (settings.stripe === undefined) {
        throw new Error('PAYMENT_PROVIDER=stripe without its STRIPE_* settings');
      }
      return new StripePaymentProvider(settings.stripe);
    case 'none':
      return new NoPaymentProvider();
  }
}

@Module({
  imports: [
    TypeOrmModule.forFeature([BillingCustomerEntity, CreditPurchaseEntity, BillingEventEntity, TierOverrideEntity]),
    CreditsModule,
    UsersModule,
  ],
  controllers: [BillingController, StripeWebhookController],
  providers: [
    BillingService,
    BillingEventsService,
    BillingRepository,
    PurchaseMetrics,
    PurchaseReconcileService,
    TierOverrideService,
    { provide: PAYMENT_PROVIDER, inject: [SETTINGS], useFactory: (settings: Settings) => paymentProviderFor(settings) },
  ],
  exports: [PurchaseReconcileService, TierOverrideService],
})
export class BillingModule {}
