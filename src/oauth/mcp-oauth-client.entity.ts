import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * The client the service registered at an MCP server's authorization server (RFC 7591 dynamic
 * registration): one per issuer and redirect URI, reused by every user. The secret, when the server
 * issued one, is sealed with the vault's cipher (additional data: `mcp_oauth_clients:<id>`).
 */
@Entity({ name: 'mcp_oauth_clients' })
export class McpOAuthClientEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'text' })
  issuer: string;

  @Column({ name: 'redirect_uri', type: 'text' })
  redirectUri: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId: string;

  @Column({ name: 'key_id', type: 'text', nullable: true })
  keyId: string | null;

  @Column({ type: 'bytea', nullable: true })
  iv: Buffer | null;

  @Column({ type: 'bytea', nullable: true })
  ciphertext: Buffer | null;

  @Column({ name: 'auth_tag', type: 'bytea', nullable: true })
  authTag: Buffer | null;

  /** `none` (a public client, PKCE only), `client_secret_post` or `client_secret_basic`. */
  @Column({ name: 'token_endpoint_auth_method', type: 'text', default: 'none' })
  tokenEndpointAuthMethod: string;

  /** The registration response without its secret (client_id_issued_at, expiry, …). */
  @Column({ type: 'jsonb', default: {} })
  registration: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
