import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** charge_credits as CreditHolds1764800000000 left it (for down()). */
const CHARGE_FUNCTION = `
  CREATE FUNCTION charge_credits(
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
      DELETE FROM credit_holds h WHERE h.key = p_reference AND h.user_id = p_user;
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

/** reserve_credits as CreditHolds1764800000000 made it (for down()). */
const RESERVE_FUNCTION = `
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
  $$`;

/**
 * The credit rules leave the database: holding credits for a model call and charging it are
 * CreditsService's code now (src/credits), each a transaction under the balance's row lock, with
 * every row written by the repository of the feature that owns its table (the ledger and the holds
 * by credits, the balance by users, a run's usage by runs). The two PL/pgSQL functions that did it
 * in one round trip go; down() puts them back as they were.
 */
export class CreditRulesInCode1764900000000 implements MigrationInterface {
  name = 'CreditRulesInCode1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION charge_credits(uuid, bigint, text, text, uuid, bigint, bigint)');
    await q.query('DROP FUNCTION reserve_credits(uuid, text, bigint, bigint)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(RESERVE_FUNCTION);
    await q.query(CHARGE_FUNCTION);
  }
}
