import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { TimelineEntry } from './timeline.js';

/**
 * The timeline of an ended run, written by its workflow as its last step (see RunArchiveService):
 * what GET /runs/:id shows once the run has ended, whether or not Temporal still keeps its history.
 */
@Entity({ name: 'run_archives' })
export class RunArchiveEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid' })
  runId: string;

  /** The workflow execution that wrote it (a retry of the same execution may write it again). */
  @Column({ name: 'temporal_run_id', type: 'text' })
  temporalRunId: string;

  /** Ends with `completed` (its `output` is the run's final answer), `failed` or `cancelled`. */
  @Column({ type: 'json' })
  timeline: TimelineEntry[];

  @Column({ name: 'archived_at', type: 'timestamptz', precision: 3 })
  archivedAt: Date;
}
