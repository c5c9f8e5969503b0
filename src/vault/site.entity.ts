import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { McpServerState, SiteProtocol } from '../sites/mcp-state.js';
import type { Manifest } from '../sites/manifest.js';

/** A site in a user's vault, with a snapshot of its manifest. */
@Entity({ name: 'sites' })
export class SiteEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'workspace_id', type: 'uuid', nullable: true })
  workspaceId: string | null;

  /** The address the user gave (normalised: no trailing slash, no query). */
  @Column({ type: 'text' })
  url: string;

  /** `agentsite`: a manifest and HTTPS tool endpoints; `mcp`: an MCP server at `url`. */
  @Column({ type: 'text', default: 'agentsite' })
  protocol: SiteProtocol;

  /**
   * A manifest-shaped snapshot for both protocols: an MCP server's name, version and description come
   * from its server info, `server.url` is its endpoint, `tools` its listed tools (empty until a
   * credential works: status `needs_connection`).
   */
  @Column({ type: 'jsonb' })
  manifest: Manifest;

  /** MCP only: the endpoint, revision and authorization discovered (null for agentsite sites). */
  @Column({ type: 'jsonb', nullable: true })
  mcp: McpServerState | null;

  @Column({ name: 'manifest_fetched_at', type: 'timestamptz', precision: 3 })
  manifestFetchedAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
