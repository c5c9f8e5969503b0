import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * What the model is shown of runs besides their conversation (RunToolSet: the system prompt and the
 * tools), stored once per distinct content and named by the sha256 of its canonical JSON: a run's
 * workflow carries only the hash (runs.tool_set_hash), and each model turn reads the set by it. Deleted
 * by the run retention clean-up once no run names it.
 */
@Entity({ name: 'run_tool_sets' })
export class RunToolSetEntity {
  /** sha256 (hex) of `content`. */
  @PrimaryColumn({ type: 'text' })
  hash: string;

  /** The set's canonical JSON (keys sorted), exactly the text the hash is of. */
  @Column({ type: 'text' })
  content: string;

  /**
   * When a run last started with it (written at each start): the clean-up leaves a set alone for an hour
   * after that, so a run starting as it runs keeps its set.
   */
  @Column({ name: 'used_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  usedAt: Date;
}
