import { Module } from '@nestjs/common';
import { CreditHooks } from './credit-hooks.js';
import { CreditsRepository } from './credits.repository.js';
import { CreditsService } from './credits.service.js';

/**
 * Credit balances and their ledger, for every feature that charges or checks: the rules (holds,
 * charges, adjustments) and the SQL of `credit_ledger` and `credit_holds`. The balance column
 * (`users.credits`) and a run's usage are written by their owners, through the CreditHooks that
 * UsersModule and RunsModule register.
 */
@Module({
  providers: [CreditsService, CreditsRepository, CreditHooks],
  exports: [CreditsService, CreditHooks],
})
export class CreditsModule {}
