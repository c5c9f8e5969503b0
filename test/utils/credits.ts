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

/**
 * Starts every call at once behind another transaction's lock of the user's balance row, and lets
 * them go once each has reached PostgreSQL (waiting for that lock or, were its rule not under the
 * lock, done): so they are truly concurrent, whatever the event loop's order. Their answers, in order.
 */
export async function behindBalanceLock<T>(
  dataSource: DataSource,
  userId: string,
  calls: Array<() => Promise<T>>,
): Promise<T[]> {
  const blocker = dataSource.createQueryRunner();
  await blocker.startTransaction();
  await blocker.query('SELECT credits FROM users WHERE id = $1 FOR UPDATE', [userId]);
  let settled = 0;
  const pending = calls.map((call) => call().finally(() => (settled += 1)));
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [{ n }] = await dataSource.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
      );
      if (n + settled >= calls.length) {
        break;
      }
      if (Date.now() > deadline) {
        throw new Error(`only ${n + settled} of ${calls.length} calls reached the balance's lock in 20 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await blocker.commitTransaction();
    await blocker.release();
  }
  return Promise.all(pending);
}
