import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** The balance column (`users.credits`), written by its owner, the users feature, in the caller's transaction. */
export interface BalanceRows {
  /** The user's balance under a row lock held until `em`'s transaction ends; undefined when there is no such user. */
  lock(em: EntityManager, userId: string): Promise<number | undefined>;
  /** Sets the balance, in `em`'s transaction (the caller holds the row lock); `dropCached` drops this process's cached user now. */
  set(em: EntityManager, userId: string, balance: number, options: { dropCached: boolean }): Promise<void>;
}

/** What a model turn of a run used, added to the run's usage by its owner, the runs feature. */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  credits: number;
}

/** Adds a charge's usage to its run (`runs.usage`), in the caller's transaction. */
export type RunUsageWriter = (em: EntityManager, runId: string, usage: RunUsage) => Promise<void>;

/**
 * The rows a credit change writes that other features own, registered by those features (UsersModule
 * the balance, RunsModule a run's usage). They build on credits and so cannot be imported here; the
 * hooks keep the credit rules in this folder, each write in its owner's repository, and every write
 * of a charge in one transaction. A charge that needs a hook nobody registered fails loudly.
 */
@Injectable()
export class CreditHooks {
  private balanceRows: BalanceRows | undefined;
  private runUsageWriter: RunUsageWriter | undefined;

  registerBalances(rows: BalanceRows): void {
    this.balanceRows = rows;
  }

  registerRunUsage(writer: RunUsageWriter): void {
    this.runUsageWriter = writer;
  }

  get balances(): BalanceRows {
    if (this.balanceRows === undefined) {
      throw new Error('No balance rows registered: UsersModule registers them (import it where credits are charged)');
    }
    return this.balanceRows;
  }

  get runUsage(): RunUsageWriter {
    if (this.runUsageWriter === undefined) {
      throw new Error(
        "No run usage writer registered: RunsModule registers it (import it where runs' turns are charged)",
      );
    }
    return this.runUsageWriter;
  }
}
