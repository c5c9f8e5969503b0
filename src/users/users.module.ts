import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { type BalanceRows, CreditHooks } from '../credits/credit-hooks.js';
import { CreditsModule } from '../credits/credits.module.js';
import { UserEntity } from './user.entity.js';
import { BALANCE_CHARGE_PART, UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/**
 * Users and their accounts: the owner of `users`, whose rows other features write only through
 * UsersService (billing the plan and the card; credits the balance, through
 * the CreditHooks registered here, since credits cannot import users, which builds on it).
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity]), CreditsModule],
  providers: [UsersService, UsersRepository],
  exports: [UsersService],
})
export class UsersModule implements OnModuleInit {
  constructor(
    private readonly hooks: CreditHooks,
    private readonly users: UsersRepository,
  ) {}

  onModuleInit(): void {
    this.hooks.registerBalances(balanceRowsOf(this.users));
  }
}

/** The balance column's reads under lock and writes, as CreditsService uses them. */
export function balanceRowsOf(users: UsersRepository): BalanceRows {
  return {
    lock: (em, userId) => users.lockCredits(em, userId),
    set: (em, userId, balance, options) => users.setCredits(em, userId, balance, options),
    chargePart: BALANCE_CHARGE_PART,
  };
}
