import { Module } from '@nestjs/common';
import { CreditsService } from '../credits/credits.service.js';
import { DatabaseModule } from '../database/database.module.js';
import { BillingController } from './billing.controller.js';
import { BillingService } from './billing.service.js';
import { PAYMENT_PROVIDER, TestPaymentProvider } from './payment-provider.js';

@Module({
  imports: [DatabaseModule],
  controllers: [BillingController],
  providers: [BillingService, CreditsService, { provide: PAYMENT_PROVIDER, useClass: TestPaymentProvider }],
})
export class BillingModule {}
