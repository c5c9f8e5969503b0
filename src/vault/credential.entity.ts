import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { SiteScope } from '../sites/scopes.js';

export type CredentialKind = 'bearer' | 'oauth2';
export type CredentialStatus = 'active' | 'reauth_required';

/** The one credential of a vault site; its secret is sealed (AES-256-GCM, row and site ids as additional data). */
@Entity({ name: 'site_credentials' })
export class CredentialEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'site_id', type: 'uuid', unique: true })
  siteId: string;

  @Column({ type: 'text' })
  kind: CredentialKind;

  @Column({ type: 'text', default: 'active' })
  status: CredentialStatus;

  @Column({ name: 'key_id', type: 'text' })
  keyId: string;

  @Column({ type: 'bytea' })
  iv: Buffer;

  @Column({ type: 'bytea' })
  ciphertext: Buffer;

  @Column({ name: 'auth_tag', type: 'bytea' })
  authTag: Buffer;

  @Column({ name: 'token_hint', type: 'text' })
  tokenHint: string;

  /** Bearer: the expiry the user gave; OAuth: the access token's expiry. */
  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3, nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  scopes: SiteScope[] | null;

  /** The scope a server asked for in a 403 `insufficient_scope` (step-up); the next OAuth start asks for it. */
  @Column({ name: 'required_scope', type: 'text', nullable: true })
  requiredScope: string | null;

  /** Increases on every change of the secret: tells a caller whether someone refreshed meanwhile. */
  @Column({ type: 'integer', default: 1 })
  generation: number;

  /** Who holds the refresh lease (a random id per refresh attempt); null: nobody is refreshing. */
  @Column({ name: 'refresh_lease_owner', type: 'uuid', nullable: true })
  refreshLeaseOwner: string | null;

  /** Until when that lease holds; past it another caller may take over the refresh. */
  @Column({ name: 'refresh_lease_until', type: 'timestamptz', precision: 3, nullable: true })
  refreshLeaseUntil: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** What is sealed inside a credential row. */
export type CredentialSecret =
  { kind: 'bearer'; token: string } | { kind: 'oauth2'; accessToken: string; refreshToken: string | null };
