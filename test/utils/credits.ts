import type { DataSource } from 'typeorm';
import type { CacheInvalidationBus } from '../../src/common/cache/invalidation-bus.js';
import { CreditHooks } from '../../src/credits/credit-hooks.js';
import { CreditsRepository } from '../../src/credits/credits.repository.js';
import { CreditsService } from '../../src/credits/credits.service.js';
import { RUN_USAGE_CHARGE_PART } from '../../src/runs/run-usage.repository.js';
import { UserEntity } from '../../src/users/user.entity.js';
import { balanceRowsOf } from '../../src/users/users.module.js';
import { UsersRepository } from '../../src/users/users.repository.js';

/** A bus that drops nothing (never bootstrapped): the users table's trigger tells the API's caches. */
const noCaches = { dropLocal: () => undefined } as unknown as CacheInvalidationBus;

/**
 * CreditsService on `dataSource` wired as UsersModule and RunsModule wire it (the balance and a run's
 * usage written by their owners' repositories), as another process of the service would have it.
 */
export function creditsOn(dataSource: DataSource, caches: CacheInvalidationBus = noCaches): CreditsService {
  const hooks = new CreditHooks();
  hooks.registerBalances(balanceRowsOf(new UsersRepository(dataSource.getRepository(UserEntity), caches)));
  hooks.registerRunUsage(RUN_USAGE_CHARGE_PART);
  return new CreditsService(new CreditsRepository(dataSource), hooks);
}
