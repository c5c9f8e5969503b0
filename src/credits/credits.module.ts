import { Module } from '@nestjs/common';
import { CreditsRepository } from './credits.repository.js';
import { CreditsService } from './credits.service.js';

/** Credit balances and their ledger (SQL on `users.credits` and `credit_ledger`), for every feature that charges or checks. */
@Module({
  providers: [CreditsService, CreditsRepository],
  exports: [CreditsService],
})
export class CreditsModule {}
