import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { escapeLiteral } from 'pg';
import { type DataSource, type EntityManager } from 'typeorm';
import { CHARGE_RELATION } from './credit-hooks.js';

/** One row of `credit_ledger`, as the ledger page reads it. */
export interface LedgerRow {
  id: string;
  delta: number;
  reason: string;
  reference: string | null;
  balanceAfter: number;
  createdAt: Date;
}

/** The balance's row lock, the lock every change of the balance takes (prepared under `name`). */
const PREPARE_LOCK = (name: string): string =>
  `PREPARE ${name}(uuid) AS SELECT 1 FROM users WHERE id = $1 FOR UPDATE;\n`;

/** A user id as the hold's message carries it: a UUID, nothing else (the message has no parameters). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The hold's two statements, prepared once per connection (PREPARE: parsed and planned once, as the
 * other hot statements are; planning the hold's CTE on every call cost PostgreSQL more CPU than the
 * round trips it saves). The lock takes the balance's row lock, the lock every charge takes. The
 * hold drops the user's expired holds (but the one of this key, which the upsert renews), sums the
 * unexpired holds of the other keys, and writes (or renews, for a retried call with the same key) this
 * key's hold when the balance less that sum covers the amount; a key another user holds is left as it
 * is. It answers the sum and the balance (no row: no such user).
 */
const PREPARE_HOLD =
  `${PREPARE_LOCK('agentsite_hold_lock')}` +
  'PREPARE agentsite_hold(uuid, text, bigint, bigint) AS ' +
  'WITH balance AS (SELECT credits FROM users WHERE id = $1), ' +
  'expired AS (DELETE FROM credit_holds WHERE user_id = $1 AND expires_at <= now() AND key <> $2), ' +
  'held AS (SELECT coalesce(sum(amount), 0)::bigint AS n FROM credit_holds ' +
  'WHERE user_id = $1 AND key <> $2 AND expires_at > now()), ' +
  'hold AS (INSERT INTO credit_holds (key, user_id, amount, expires_at) ' +
  "SELECT $2, $1, $3, now() + $4 * interval '1 millisecond' FROM held, balance WHERE balance.credits - held.n >= $3 " +
  'ON CONFLICT (key) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at ' +
  'WHERE credit_holds.user_id = $1) ' +
  'SELECT held.n, balance.credits FROM held, balance;\n';

/**
 * Statements another feature runs in the hold's message, between the balance's lock and the hold (so
 * under the lock, in the same implicit transaction, in the same round trip): EXECUTEs of statements it
 * PREPAREs once per connection, their values as literals it checked.
 */
export interface HoldPrelude {
  /** The PREPAREs of the prelude's statements, sent ahead of the message on a connection without them. */
  prepare: string;
  /** The connections that have them prepared (the owner keeps one set per text). */
  prepared: WeakSet<object>;
  /** The EXECUTEs, separated by `;\n`, without a trailing one. */
  text: string;
  /** How many statements `text` holds (each answers one result). */
  statements: number;
}

/** A hold asked for: `amount` for the call `key`, for `ttlMs`. */
export interface HoldEntry {
  userId: string;
  key: string;
  amount: number;
  ttlMs: number;
}

/** A hold's answer: the balance and the other holds' sum (undefined: no such user), and each prelude statement's rows. */
export interface HoldAnswer {
  decided: { balance: number; held: number } | undefined;
  prelude: Array<Array<Record<string, unknown>>>;
}

/**
 * The hold rule in one round trip: the lock and the hold executed in one simple-protocol message,
 * which PostgreSQL runs as one implicit transaction (a failure of either rolls back both). The hold is
 * a statement of its own, so its snapshot is taken after the lock was granted (READ COMMITTED) and it
 * sees every hold and charge committed before: a single statement could not do it, its snapshot
 * predating its wait for the lock. A simple-protocol message carries no parameters: the values are
 * literals, the id checked as a UUID, the key quoted by pg's escapeLiteral, the numbers checked as
 * safe integers. A prelude's statements go after the lock: every same-user message then waits for the
 * lock before taking any other lock (a row the prelude writes that refers to the user takes a share
 * lock on the user's row; taken before the lock, two messages would deadlock upgrading it).
 */
function holdText(entry: HoldEntry, prelude?: string): string {
  if (!UUID.test(entry.userId)) {
    throw new Error('credit hold: the user id is not a UUID');
  }
  if (!Number.isSafeInteger(entry.amount) || !Number.isSafeInteger(entry.ttlMs)) {
    throw new Error('credit hold: the amount and the lifetime must be integers');
  }
  const user = `'${entry.userId}'`;
  return (
    `EXECUTE agentsite_hold_lock(${user});\n` +
    (prelude === undefined ? '' : `${prelude};\n`) +
    `EXECUTE agentsite_hold(${user}, ${escapeLiteral(entry.key)}, ${entry.amount}, ${entry.ttlMs})`
  );
}

/** A run's model turn as its charge names it: the run, and the tokens added to the run's usage. */
export interface RunTurnEntry {
  runId: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * The charge's statement ($1 the user, $2 the amount, $3 the reason, $4 the reference or null, $5 the
 * run or null, $6 and $7 its tokens), sent after the balance's row lock in the same message (see
 * chargeText): its snapshot is taken once the lock is granted, so it sees every charge committed
 * before. It releases the reference's hold, finds a charge already made with the reference, and,
 * when there is none, computes the charge (`charge`: the amount or the balance, if less) and writes
 * the ledger row, then the owners' parts: the balance, the run's usage. It answers the balance before
 * the charge, what it charged and the earlier charge's delta (no row: no such user).
 */
function prepareChargeText(parts: { balance: string; runUsage: string }): string {
  return (
    PREPARE_LOCK('agentsite_charge_lock') +
    'PREPARE agentsite_charge(uuid, bigint, text, text, uuid, bigint, bigint) AS ' +
    'WITH balance AS (SELECT credits FROM users WHERE id = $1), ' +
    'released AS (DELETE FROM credit_holds WHERE key = $4 AND user_id = $1), ' +
    'previous AS (SELECT delta FROM credit_ledger WHERE reference = $4 LIMIT 1), ' +
    `${CHARGE_RELATION} AS (SELECT $1 AS user_id, least($2, credits) AS charged, credits - least($2, credits) AS balance ` +
    'FROM balance WHERE NOT EXISTS (SELECT 1 FROM previous)), ' +
    'ledger AS (INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) ' +
    `SELECT user_id, -charged, $3, $4, balance FROM ${CHARGE_RELATION}), ` +
    `balance_set AS (${parts.balance}), ` +
    `run_usage AS (${parts.runUsage}) ` +
    `SELECT balance.credits, (SELECT charged FROM ${CHARGE_RELATION}) AS charged, ` +
    '(SELECT delta FROM previous) AS previous FROM balance;\n'
  );
}

/** The charge's message: the balance's lock, then the charge, values as literals (see holdText). */
function chargeText(entry: {
  userId: string;
  amount: number;
  reason: string;
  reference: string | null;
  run: RunTurnEntry | null;
}): string {
  if (!UUID.test(entry.userId) || (entry.run !== null && !UUID.test(entry.run.runId))) {
    throw new Error('credit charge: the user id and the run id must be UUIDs');
  }
  const numbers = [entry.amount, entry.run?.inputTokens ?? 0, entry.run?.outputTokens ?? 0];
  if (!numbers.every((n) => Number.isSafeInteger(n))) {
    throw new Error('credit charge: the amount and the tokens must be integers');
  }
  const user = `'${entry.userId}'`;
  const reference = entry.reference === null ? 'NULL' : escapeLiteral(entry.reference);
  const run = entry.run === null ? 'NULL' : `'${entry.run.runId}'`;
  return (
    `EXECUTE agentsite_charge_lock(${user});\n` +
    `EXECUTE agentsite_charge(${user}, ${numbers[0]}, ${escapeLiteral(entry.reason)}, ${reference}, ${run}, ${numbers[1]}, ${numbers[2]})`
  );
}

/** A connection of pg's pool: a simple-protocol query answers each statement's result. */
interface PgClient {
  query(text: string): Promise<Array<{ rows: Array<Record<string, unknown>> }>>;
  /** Back to the pool; with an error, the connection is closed instead. */
  release(err?: Error | boolean): void;
}

/** pg's pool, as TypeORM's PostgreSQL driver keeps it. */
interface PgPool {
  connect(): Promise<PgClient>;
}

/** The pool's connections that have the hold's, and the charge's, statements prepared (a closed one leaves with its object). */
const holdPrepared = new WeakSet<object>();
const chargePrepared = new WeakSet<object>();

/** Statements a message EXECUTEs: their PREPAREs, and the connections that have them prepared. */
interface PreparedPart {
  prepared: WeakSet<object>;
  prepare: string;
}

/**
 * Sends `text` (EXECUTEs of prepared statements) as one simple-protocol message on a connection of
 * the pool, with the PREPAREs of the parts that connection has not prepared ahead of it.
 */
async function sendPrepared(
  dataSource: DataSource,
  parts: PreparedPart[],
  text: string,
): Promise<Array<{ rows: Array<Record<string, unknown>> }>> {
  const client = await (dataSource.driver as unknown as { master: PgPool }).master.connect();
  let results: Awaited<ReturnType<PgClient['query']>>;
  try {
    const prepare = parts.filter((part) => !part.prepared.has(client)).map((part) => part.prepare);
    results = await client.query(prepare.join('') + text);
  } catch (err) {
    // Whether the statements were prepared before the failure is unknown: the connection goes.
    client.release(err instanceof Error ? err : true);
    throw err;
  }
  for (const part of parts) {
    part.prepared.add(client);
  }
  client.release();
  return results;
}

/**
 * The SQL of credit rows: the ledger (`credit_ledger`) and the holds of calls in flight
 * (`credit_holds`), raw statements. The balance they go with (`users.credits`) belongs to the users
 * feature (CreditHooks); CreditsService takes the balance's row lock and runs these in its
 * transaction. Writes take the caller's transaction.
 */
@Injectable()
export class CreditsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in a new transaction. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** The user's balance; 0 when there is no such user. */
  async balance(userId: string): Promise<number> {
    const rows: Array<{ credits: string }> = await this.dataSource.query('SELECT credits FROM users WHERE id = $1', [
      userId,
    ]);
    return Number(rows[0]?.credits ?? 0);
  }

  /**
   * Holds `amount` for the call `key` for `ttlMs` when the balance less the other unexpired holds
   * covers it, under the balance's row lock, in one round trip (see holdText): answers the balance
   * and what the other holds sum to (undefined when there is no such user), and the rows of each of
   * the prelude's statements, run under the lock before the hold.
   */
  async hold(entry: HoldEntry, prelude?: HoldPrelude): Promise<HoldAnswer> {
    const parts: PreparedPart[] = [{ prepared: holdPrepared, prepare: PREPARE_HOLD }];
    if (prelude !== undefined) {
      parts.push({ prepared: prelude.prepared, prepare: prelude.prepare });
    }
    const results = await sendPrepared(this.dataSource, parts, holdText(entry, prelude?.text));
    const row = results.at(-1)?.rows[0] as { n: string; credits: string } | undefined;
    return {
      decided: row === undefined ? undefined : { balance: Number(row.credits), held: Number(row.n) },
      prelude: prelude === undefined ? [] : results.slice(-1 - prelude.statements, -1).map((r) => r.rows),
    };
  }

  /**
   * A model call's charge in one round trip (see chargeText): up to `amount` (what the balance has,
   * if less: the usage already happened), the reference's hold released, the ledger row, the balance
   * and, with a run, the run's usage; with a reference already charged (a retried call) nothing is
   * written and `previous` is that charge's delta. Answers the balance before the charge and what was
   * charged; undefined when there is no such user. `parts`: the writes of the balance's and the run's
   * owners (CreditHooks), the same on every call of a process.
   */
  async charge(
    entry: { userId: string; amount: number; reason: string; reference: string | null; run: RunTurnEntry | null },
    parts: { balance: string; runUsage: string },
  ): Promise<{ credits: number; charged: number; previous: number | null } | undefined> {
    const prepare = this.chargeStatements(parts);
    const results = await sendPrepared(this.dataSource, [{ prepared: chargePrepared, prepare }], chargeText(entry));
    const row = results.at(-1)?.rows[0] as
      { credits: string; charged: string | null; previous: string | null } | undefined;
    if (row === undefined) {
      return undefined;
    }
    return {
      credits: Number(row.credits),
      charged: Number(row.charged ?? 0),
      previous: row.previous === null ? null : Number(row.previous),
    };
  }

  /** The charge's PREPARE text, built once from its owners' parts (a prepared name stands for one text). */
  private chargeStatements(parts: { balance: string; runUsage: string }): string {
    if (this.prepareCharge === undefined) {
      this.prepareCharge = { parts, text: prepareChargeText(parts) };
    } else if (
      this.prepareCharge.parts.balance !== parts.balance ||
      this.prepareCharge.parts.runUsage !== parts.runUsage
    ) {
      throw new Error('credit charge: the parts of its statement changed within the process');
    }
    return this.prepareCharge.text;
  }
  private prepareCharge: { parts: { balance: string; runUsage: string }; text: string } | undefined;

  /** Drops the hold of a call that ended without a charge (the model call failed). */
  async release(userId: string, key: string): Promise<void> {
    await this.dataSource.query('DELETE FROM credit_holds WHERE key = $1 AND user_id = $2', [key, userId]);
  }

  /** A ledger row (the caller sets the balance, under the row lock, in `em`'s transaction). */
  async record(
    em: EntityManager,
    entry: { userId: string; delta: number; reason: string; reference: string | null; balance: number },
  ): Promise<void> {
    await em.query(
      'INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after) VALUES ($1, $2, $3, $4, $5)',
      [entry.userId, entry.delta, entry.reason, entry.reference, entry.balance],
    );
  }

  /** A grant already in the balance (a registration's opening credits): its ledger row only, in `em`'s transaction. */
  async recordOpening(em: EntityManager, entry: { userId: string; credits: number; reason: string }): Promise<void> {
    await em.query('INSERT INTO credit_ledger (user_id, delta, reason, balance_after) VALUES ($1, $2, $3, $2)', [
      entry.userId,
      entry.credits,
      entry.reason,
    ]);
  }

  /**
   * The user's ledger, newest first: rows with an id below `beforeId` (the keyset; ids only grow),
   * one more than `limit` to tell a next page. The (user_id, id) index serves it.
   */
  async page(userId: string, limit: number, beforeId: string | undefined): Promise<LedgerRow[]> {
    const rows: Array<{
      id: string;
      delta: string;
      reason: string;
      reference: string | null;
      balance_after: string;
      created_at: Date;
    }> = await this.dataSource.query(
      `SELECT id, delta, reason, reference, balance_after, created_at FROM credit_ledger
        WHERE user_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
        ORDER BY id DESC LIMIT $3`,
      [userId, beforeId ?? null, limit + 1],
    );
    return rows.map((r) => ({
      id: String(r.id),
      delta: Number(r.delta),
      reason: r.reason,
      reference: r.reference,
      balanceAfter: Number(r.balance_after),
      createdAt: r.created_at,
    }));
  }
}
