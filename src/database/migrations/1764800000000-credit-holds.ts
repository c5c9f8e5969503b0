import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * charge_credits as ChargeFunction1764201600000 made it, and with `releaseHold` the same function
 * that also drops the credit hold of its reference (a repeated charge too).
 */
function chargeFunction(releaseHold: boolean): string {
  return `
  CREATE OR REPLACE FUNCTION charge_credits(
    p_user uuid, p_amount bigint, p_reason text, p_reference text,
    p_run uuid, p_input_tokens bigint, p_output_tokens bigint
  ) RETURNS TABLE (out_charged bigint, out_balance bigint, out_repeated boolean)
  LANGUAGE plpgsql AS $$
  DECLARE
    v_credits bigint;
    v_previous bigint;
    v_charged bigint;
  BEGIN
    SELECT u.credits INTO v_credits FROM users u WHERE u.id = p_user FOR UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'no user %', p_user USING ERRCODE = 'no_data_found';
    END IF;
    IF p_reference IS NOT NULL THEN
      ${releaseHold ? 'DELETE FROM credit_holds h WHERE h.key = p_reference AND h.user_id = p_user;' : ''}
      SELECT l.delta INTO v_previous FROM credit_ledger l WHERE l.reference = p_reference;
      IF FOUND THEN
        RETURN QUERY SELECT -v_previous, v_credits, true;
        RETURN;
      END IF;
    END IF;
    v_charged := LEAST(p_amount, v_credits);
    INSERT INTO credit_ledger (user_id, delta, reason, reference, balance_after)
      VALUES (p_user, -v_charged, p_reason, p_reference, v_credits - v_charged);
    UPDATE users SET credits = v_credits - v_charged, updated_at = now() WHERE id = p_user;
    IF p_run IS NOT NULL THEN
      UPDATE runs SET usage = jsonb_build_object(
          'inputTokens', (usage->>'inputTokens')::bigint + p_input_tokens,
          'outputTokens', (usage->>'outputTokens')::bigint + p_output_tokens,
          'credits', (usage->>'credits')::bigint + v_charged)
        WHERE id = p_run;
    END IF;
    RETURN QUERY SELECT v_charged, v_credits - v_charged, false;
  END
  $$`;
}

/**
 * Credits held for model calls in flight, so that no model call starts unless its owner's balance
 * covers it (chat, runs, any caller alike):
 *
 * - `credit_holds`: one row per model call in flight, keyed by the reference its charge will carry,
 *   with an expiry (a process that died mid-call holds nothing for ever).
 * - `reserve_credits(user, key, amount, ttl)`: under the user's row lock (the lock every charge
 *   takes), the balance less the unexpired holds of other keys must cover `amount`; then the hold is
 *   written (or renewed, for a retried call with the same key). Every statement of the function sees
 *   the holds committed before the lock was granted, so N calls at once against a balance that
 *   covers one let exactly one through.
 * - `charge_credits` now also releases the hold of its reference, in the same transaction as the
 *   charge (a repeated charge too).
 * - `chat_turn_slots`: a user's chat turns in progress, at most MAX_CONCURRENT_CHAT_TURNS, each slot
 *   taken by an atomic upsert and freed at the turn's end (or when it expires).
 * - `chat_messages.cut`: a reply saved as far as it got when the balance or the turn's input limit
 *   ended it.
 */
export class CreditHolds1764800000000 implements MigrationInterface {
  name = 'CreditHolds1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE credit_holds (
        key text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        amount bigint NOT NULL CHECK (amount > 0),
        expires_at timestamptz NOT NULL
      )`);
    await q.query('CREATE INDEX credit_holds_user ON credit_holds (user_id, expires_at)');
    await q.query(`
      CREATE FUNCTION reserve_credits(p_user uuid, p_key text, p_amount bigint, p_ttl_ms bigint)
        RETURNS TABLE (out_reserved boolean, out_available bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_credits bigint;
        v_held bigint;
      BEGIN
        SELECT u.credits INTO v_credits FROM users u WHERE u.id = p_user FOR UPDATE;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'no user %', p_user USING ERRCODE = 'no_data_found';
        END IF;
        DELETE FROM credit_holds h WHERE h.user_id = p_user AND h.expires_at <= now();
        SELECT coalesce(sum(h.amount), 0) INTO v_held FROM credit_holds h
          WHERE h.user_id = p_user AND h.key <> p_key;
        IF v_credits - v_held < p_amount THEN
          RETURN QUERY SELECT false, GREATEST(v_credits - v_held, 0);
          RETURN;
        END IF;
        INSERT INTO credit_holds (key, user_id, amount, expires_at)
          VALUES (p_key, p_user, p_amount, now() + p_ttl_ms * interval '1 millisecond')
          ON CONFLICT (key) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at
          WHERE credit_holds.user_id = p_user;
        RETURN QUERY SELECT true, v_credits - v_held - p_amount;
      END
      $$`);
    await q.query(chargeFunction(true));
    await q.query(`
      CREATE TABLE chat_turn_slots (
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        slot integer NOT NULL,
        turn uuid NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, slot)
      )`);
    await q.query('ALTER TABLE chat_messages ADD COLUMN cut boolean NOT NULL DEFAULT false');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE chat_messages DROP COLUMN cut');
    await q.query('DROP TABLE chat_turn_slots');
    await q.query(chargeFunction(false));
    await q.query('DROP FUNCTION reserve_credits(uuid, text, bigint, bigint)');
    await q.query('DROP TABLE credit_holds');
  }
}
