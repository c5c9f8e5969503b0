import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { SiteScope } from '../sites/scopes.js';

/** A pending OAuth authorization: single use, bound to a user and a site, expiring. */
@Entity({ name: 'oauth_states' })
export class OAuthStateEntity {
  /** SHA-256 of the `state` value (the value itself only travels in the browser's URL). */
  @PrimaryColumn({ name: 'state_hash', type: 'text' })
  stateHash: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'site_id', type: 'uuid' })
  siteId: string;

  @Column({ name: 'key_id', type: 'text' })
  keyId: string;

  @Column({ type: 'bytea' })
  iv: Buffer;

  /** The sealed PKCE code verifier. */
  @Column({ type: 'bytea' })
  ciphertext: Buffer;

  @Column({ name: 'auth_tag', type: 'bytea' })
  authTag: Buffer;

  @Column({ type: 'jsonb' })
  scopes: SiteScope[];

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ name: 'used_at', type: 'timestamptz', precision: 3, nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
