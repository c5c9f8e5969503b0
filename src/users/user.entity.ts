import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Role, SubscriptionStatus, Tier } from './user-fields.js';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Stored lower-cased; unique. */
  @Column({ type: 'text', unique: true })
  email: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ name: 'password_hash', type: 'text' })
  passwordHash: string;

  @Column({ type: 'text', default: 'user' })
  role: Role;

  @Column({ type: 'text', default: 'free' })
  tier: Tier;

  @Column({ type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  credits: number;

  @Column({ name: 'subscription_status', type: 'text', default: 'active' })
  subscriptionStatus: SubscriptionStatus;

  @Column({ name: 'accepted_terms_at', type: 'timestamptz', nullable: true })
  acceptedTermsAt: Date | null;

  @Column({ name: 'accepted_terms_version', type: 'text', nullable: true })
  acceptedTermsVersion: string | null;

  /** The card on file, as the payment provider describes it (never the card number). */
  @Column({ name: 'payment_method', type: 'jsonb', nullable: true })
  paymentMethod: { brand: string; last4: string; ref: string } | null;

  /** Tokens issued before this instant are revoked (logout-all). */
  @Column({ name: 'tokens_valid_after', type: 'timestamptz', nullable: true })
  tokensValidAfter: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
