import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Billing reliability (issue 40). `credit_purchases_pending`: the purchase reconciler's batch (the
 * oldest pending purchases of every user) and the pending gauge read only pending rows. A customer
 * keeps what Stripe's subscription sells (`subscription_tier`, `subscription_status`: the last state
 * applied from the API or an event), so an admin sees it next to the tier in force. `tier_overrides`:
 * an admin's tier change, which a later subscription event does not undo (the event is still
 * recorded: `overridden_at`, and what it said) until the admin clears it or the plan itself changes.
 */
export class BillingReliability1765000021100 implements MigrationInterface {
  name = 'BillingReliability1765000021100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX credit_purchases_pending ON credit_purchases (created_at, id) WHERE status = 'pending'`,
    );
    await q.query(`
      ALTER TABLE billing_customers
        ADD COLUMN subscription_tier text,
        ADD COLUMN subscription_status text`);
    await q.query(`
      CREATE TABLE tier_overrides (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        tier text NOT NULL,
        set_by uuid REFERENCES users(id) ON DELETE SET NULL,
        set_at timestamptz(3) NOT NULL,
        overridden_at timestamptz(3),
        overridden_tier text,
        overridden_status text
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tier_overrides`);
    await q.query(`ALTER TABLE billing_customers DROP COLUMN subscription_tier, DROP COLUMN subscription_status`);
    await q.query(`DROP INDEX credit_purchases_pending`);
  }
}
