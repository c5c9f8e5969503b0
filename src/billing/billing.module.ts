import { Module } from '@nestjs/common';
import { CreditsModule } from '../credits/credits.module.js';
import { BillingController } from './billing.controller.js';
import { BillingRepository } from './billing.repository.js';
import { BillingService } from './billing.service.js';
import { SETTINGS } from '../config/settings.module.js';
import type { Settings } from '../config/settings.js';
import { PAYMENT_PROVIDER, paymentProviderFor } from './payment-provider.js';

@Module({
  imports: [CreditsModule],
  controllers: [BillingController],
  providers: [
    BillingService,
    BillingRepository,
    { provide: PAYMENT_PROVIDER, inject: [SETTINGS], useFactory: (settings: Settings) => paymentProviderFor(settings) },
  ],
})
export class BillingModule {}
