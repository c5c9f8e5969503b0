import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Billing with a real payment provider: the provider's customer and subscription of each user, the
 * credit purchases (granted once, whichever of the API answer and the provider's event comes first)
 * and the provider events already applied (deduplicated by id).
 */
export class Billing1764500000000 implements MigrationInterface {
  name = 'Billing1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing_customers (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        customer_id text NOT NULL UNIQUE,
        subscription_id text UNIQUE,
        status_event_at timestamptz(3),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE credit_purchases (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        credits integer NOT NULL CHECK (credits > 0),
        amount_cents integer NOT NULL CHECK (amount_cents > 0),
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        provider_ref text UNIQUE,
        failure text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        settled_at timestamptz(3)
      )`);
    await q.query(`CREATE INDEX credit_purchases_user ON credit_purchases (user_id, created_at DESC, id)`);
    await q.query(`
      CREATE TABLE billing_events (
        id text PRIMARY KEY,
        type text NOT NULL,
        received_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing_events`);
    await q.query(`DROP TABLE credit_purchases`);
    await q.query(`DROP TABLE billing_customers`);
  }
}
