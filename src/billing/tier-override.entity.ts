import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';

/**
 * An admin's tier change, in force over the subscription's events: a later event of the user's
 * subscription that would change the tier or its status is recorded here (`overridden*`) instead of
 * applied, until the admin clears the override or the plan changes deliberately (the user changes it
 * through the API, or the subscription's price changes at Stripe).
 */
@Entity({ name: 'tier_overrides' })
export class TierOverrideEntity {
  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'text' })
  tier: Tier;

  /** The admin who set it (null once that account is deleted). */
  @Column({ name: 'set_by', type: 'uuid', nullable: true })
  setBy: string | null;

  @Column({ name: 'set_at', type: 'timestamptz', precision: 3 })
  setAt: Date;

  /** When the last subscription event this override held back was created at the provider. */
  @Column({ name: 'overridden_at', type: 'timestamptz', precision: 3, nullable: true })
  overriddenAt: Date | null;

  /** The tier and status that event would have set. */
  @Column({ name: 'overridden_tier', type: 'text', nullable: true })
  overriddenTier: Tier | null;

  @Column({ name: 'overridden_status', type: 'text', nullable: true })
  overriddenStatus: SubscriptionStatus | null;
}
