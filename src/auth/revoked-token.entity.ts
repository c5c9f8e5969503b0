import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A JWT revoked by logout; kept until it would have expired anyway. */
@Entity({ name: 'revoked_tokens' })
export class RevokedTokenEntity {
  @PrimaryColumn({ type: 'uuid' })
  jti: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
