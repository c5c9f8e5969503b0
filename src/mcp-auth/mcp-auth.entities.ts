import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One artifact of the authorization server for MCP clients (oidc-provider's models: sessions,
 * interactions, grants, registered clients, codes and tokens), as its adapter stores it. For a model
 * whose id is a bearer value (codes, tokens, sessions) `id` is the SHA-256 of it and the payload
 * carries no copy.
 */
@Entity({ name: 'mcp_authorization_state' })
export class McpAuthorizationStateEntity {
  @PrimaryColumn({ type: 'text' })
  model: string;

  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ name: 'grant_id', type: 'text', nullable: true })
  grantId: string | null;

  @Column({ type: 'text', nullable: true })
  uid: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3, nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'consumed_at', type: 'timestamptz', precision: 3, nullable: true })
  consumedAt: Date | null;
}

/** An MCP client a user connected (one OAuth grant): what the Connected apps list shows and revokes. */
@Entity({ name: 'connected_apps' })
export class ConnectedAppEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'grant_id', type: 'text' })
  grantId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  /** The Team workspace the grant acts in; null: the user's personal scope. */
  @Column({ name: 'workspace_id', type: 'uuid', nullable: true })
  workspaceId: string | null;

  @Column({ name: 'client_id', type: 'text' })
  clientId: string;

  @Column({ name: 'client_name', type: 'text' })
  clientName: string;

  @Column({ name: 'redirect_host', type: 'text' })
  redirectHost: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', precision: 3, nullable: true })
  lastUsedAt: Date | null;
}
