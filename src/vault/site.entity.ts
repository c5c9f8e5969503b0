import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
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

  @Column({ type: 'jsonb' })
  manifest: Manifest;

  @Column({ name: 'manifest_fetched_at', type: 'timestamptz', precision: 3 })
  manifestFetchedAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
