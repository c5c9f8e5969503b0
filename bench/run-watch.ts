import pg from 'pg';

const ENDED = ['completed', 'failed', 'cancelled'];

/**
 * When runs end, as their rows record it (what GET /api/runs/:id answers): one query every `tickMs`
 * for all the runs awaited, on one connection of its own. A run's row says `completed` once its last
 * model turn has recorded it, which is when its user can read the answer.
 */
export class RunWatch {
  private readonly waiting = new Map<string, (status: string) => void>();
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: pg.Client,
    private readonly tickMs: number,
  ) {}

  static async open(databaseUrl: string, tickMs = 2): Promise<RunWatch> {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    return new RunWatch(db, tickMs);
  }

  /** Resolves with the run's final status. */
  ended(runId: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.set(runId, resolve);
      this.schedule();
    });
  }

  /** Runs queued or active (of every agent). */
  async unended(): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM runs WHERE status IN ('queued', 'active')",
    );
    return Number(rows[0]!.n);
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.db.end();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => void this.tick(), this.tickMs);
  }

  private async tick(): Promise<void> {
    const ids = [...this.waiting.keys()];
    const { rows } = await this.db.query<{ id: string; status: string }>(
      'SELECT id, status FROM runs WHERE id = ANY($1::uuid[]) AND status = ANY($2::text[])',
      [ids, ENDED],
    );
    for (const row of rows) {
      this.waiting.get(row.id)?.(row.status);
      this.waiting.delete(row.id);
    }
    this.timer = undefined;
    if (this.waiting.size > 0) {
      this.schedule();
    }
  }
}
