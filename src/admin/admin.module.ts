import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module.js';
import { UsersModule } from '../users/users.module.js';
import { AdminController } from './admin.controller.js';

/** The operator's routes (/admin/users): a view over the users feature, with the plans billing keeps (tier overrides). */
@Module({
  imports: [UsersModule, BillingModule],
  controllers: [AdminController],
})
export class AdminModule {}
