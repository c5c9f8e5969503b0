import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A credit charge in one round trip: the same steps CreditsService took in a transaction of its own
 * (lock the balance, find a charge with the same reference, write the ledger row and the balance, add
 * the usage to the run), run by the server. A model turn made seven round trips for them before.
 */
export class ChargeFunction1764201600000 implements MigrationInterface {
  name = 'ChargeFunction1764201600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
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
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION charge_credits(uuid, bigint, text, text, uuid, bigint, bigint)');
  }
}
