import type { McpAuthorizationStateEntity } from '../mcp-auth.entities.js';
import type { McpAuthRepository, StoredArtifact } from '../mcp-auth.repository.js';

type Row = Omit<McpAuthorizationStateEntity, 'consumedAt'> & { consumedAt: Date | null };

/** The artifacts table in memory (model + stored key), with the expiry filter of the real reads. */
export class FakeMcpAuthRepository implements Pick<
  McpAuthRepository,
  'upsertArtifact' | 'findArtifact' | 'consumeArtifact' | 'destroyArtifact' | 'destroyArtifactsOfGrant' | 'sweepExpired'
> {
  readonly rows = new Map<string, Row>();
  sweeps = 0;

  private live(row: Row | undefined): row is Row {
    return row !== undefined && (row.expiresAt === null || row.expiresAt.getTime() > Date.now());
  }

  upsertArtifact(row: Omit<McpAuthorizationStateEntity, 'consumedAt'>): Promise<void> {
    const key = `${row.model}:${row.id}`;
    this.rows.set(key, { ...row, consumedAt: this.rows.get(key)?.consumedAt ?? null });
    return Promise.resolve();
  }

  findArtifact(model: string, by: { id: string } | { uid: string }): Promise<StoredArtifact | undefined> {
    const row =
      'id' in by
        ? this.rows.get(`${model}:${by.id}`)
        : [...this.rows.values()].find((r) => r.model === model && r.uid === by.uid);
    return Promise.resolve(
      this.live(row) ? { payload: structuredClone(row.payload), consumedAt: row.consumedAt } : undefined,
    );
  }

  consumeArtifact(model: string, id: string): Promise<void> {
    const row = this.rows.get(`${model}:${id}`);
    if (row !== undefined && row.consumedAt === null) {
      row.consumedAt = new Date();
    }
    return Promise.resolve();
  }

  destroyArtifact(model: string, id: string): Promise<void> {
    this.rows.delete(`${model}:${id}`);
    return Promise.resolve();
  }

  destroyArtifactsOfGrant(model: string, grantId: string): Promise<void> {
    for (const [key, row] of this.rows) {
      if (row.model === model && row.grantId === grantId) {
        this.rows.delete(key);
      }
    }
    return Promise.resolve();
  }

  sweepExpired(): Promise<number> {
    this.sweeps += 1;
    return Promise.resolve(0);
  }
}
