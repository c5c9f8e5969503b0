import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * A charge is one statement (CreditsRepository.charge) whose writes of other features' rows are parts
 * their owners write: each part is the body of a data-modifying CTE of that statement, reading the
 * relation `charge` (`user_id` uuid, `charged` bigint, `balance` bigint: the balance after the charge;
 * no row when nothing is charged: a repeated reference, or no such user) and the statement's
 * parameters `$5` (the run's id, null for none), `$6` and `$7` (the turn's input and output tokens).
 */
export const CHARGE_RELATION = 'charge';

/** The balance column (`users.credits`), written by its owner, the users feature, in the caller's transaction. */
export interface BalanceRows {
  /** The user's balance under a row lock held until `em`'s transaction ends; undefined when there is no such user. */
  lock(em: EntityManager, userId: string): Promise<number | undefined>;
  /** Sets the balance, in `em`'s transaction (the caller holds the row lock); `dropCached` drops this process's cached user now. */
  set(em: EntityManager, userId: string, balance: number, options: { dropCached: boolean }): Promise<void>;
  /** The charge's part that sets the balance to `charge.balance` (see CHARGE_RELATION). */
  readonly chargePart: string;
}

/** What a model turn of a run used, added to the run's usage by its owner, the runs feature. */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  credits: number;
}

/**
 * The charge's part that adds a model turn's usage to its run (`runs.usage`): the tokens `$6` and `$7`
 * and the credits `charge.charged` to the run `$5` (see CHARGE_RELATION).
 */
export type RunUsagePart = string;

/**
 * The rows a credit change writes that other features own, registered by those features (UsersModule
 * the balance, RunsModule a run's usage). They build on credits and so cannot be imported here; the
 * hooks keep the credit rules in this folder, each write's SQL in its owner's repository, and every
 * write of a charge in one statement. A charge that needs a hook nobody registered fails loudly.
 */
@Injectable()
export class CreditHooks {
  private balanceRows: BalanceRows | undefined;
  private runUsagePart: RunUsagePart | undefined;

  registerBalances(rows: BalanceRows): void {
    this.balanceRows = rows;
  }

  registerRunUsage(part: RunUsagePart): void {
    this.runUsagePart = part;
  }

  get balances(): BalanceRows {
    if (this.balanceRows === undefined) {
      throw new Error('No balance rows registered: UsersModule registers them (import it where credits are charged)');
    }
    return this.balanceRows;
  }

  get runUsage(): RunUsagePart {
    if (this.runUsagePart === undefined) {
      throw new Error(
        "No run usage writer registered: RunsModule registers it (import it where runs' turns are charged)",
      );
    }
    return this.runUsagePart;
  }
}
