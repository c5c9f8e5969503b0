import type { PageQuery } from '../../common/pagination.js';
import type { Scope } from '../../workspaces/scope.js';
import type { RunArchiveEntity } from '../run-archive.entity.js';
import { RunEntity } from '../run.entity.js';
import type { EndedRun, RunsRepository } from '../runs.repository.js';

type Used =
  | 'create'
  | 'insertQueued'
  | 'countAhead'
  | 'hasOpenRun'
  | 'deleteIfQueued'
  | 'findUnstarted'
  | 'findById'
  | 'findByIdOrFail'
  | 'findByDelivery'
  | 'findByDeliveryOrFail'
  | 'findInScope'
  | 'markCancelled'
  | 'cancelUnendedOfAgent'
  | 'listForAgent'
  | 'findArchive';

/** Who an agent belongs to, as the agents table would tell the scope check. */
export interface AgentOwner {
  userId: string;
  workspaceId: string | null;
}

/**
 * The `runs` rows in memory, with the rules the SQL enforces: one row per id and per (agent, delivery
 * id), queue position = runs of the agent queued or active ahead of it, deletes only while queued.
 */
export class FakeRunsRepository implements Pick<RunsRepository, Used> {
  readonly rows = new Map<string, RunEntity>();
  readonly agents = new Map<string, AgentOwner>();
  readonly archives = new Map<string, RunArchiveEntity>();
  /** Every call, in order (method name and first argument), for specs that assert what was asked. */
  readonly calls: Array<[Used, unknown]> = [];

  /** Adds a stored run (defaults: a queued manual run). */
  seed(row: Partial<RunEntity> & Pick<RunEntity, 'id' | 'agentId'>): RunEntity {
    const queuedAt = row.queuedAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, this.rows.size));
    const full = this.create({
      userId: 'user-1',
      status: 'queued',
      triggeredBy: 'manual',
      payload: null,
      input: null,
      systemPromptSource: 'agent',
      deliveryId: null,
      workflowId: `agent-${row.agentId}`,
      temporalRunId: null,
      error: null,
      usage: { inputTokens: 0, outputTokens: 0, credits: 0 },
      startedAt: null,
      endedAt: null,
      createdAt: queuedAt,
      ...row,
      queuedAt,
    });
    this.rows.set(full.id, full);
    return full;
  }

  create(row: Partial<RunEntity>): RunEntity {
    return Object.assign(new RunEntity(), row);
  }

  async insertQueued(row: RunEntity, countAhead: boolean): Promise<{ inserted: boolean; ahead: number }> {
    this.calls.push(['insertQueued', row.id]);
    const conflict =
      this.rows.has(row.id) ||
      (row.deliveryId !== null &&
        [...this.rows.values()].some((r) => r.agentId === row.agentId && r.deliveryId === row.deliveryId));
    if (conflict) {
      return { inserted: false, ahead: 0 };
    }
    // As the SQL counts under the agent's lock: every run of the agent still queued or active.
    const ahead = countAhead
      ? [...this.rows.values()].filter(
          (r) => r.agentId === row.agentId && (r.status === 'queued' || r.status === 'active'),
        ).length
      : 0;
    this.rows.set(row.id, { ...row, createdAt: row.createdAt ?? row.queuedAt });
    return { inserted: true, ahead };
  }

  async countAhead(run: RunEntity): Promise<number> {
    return [...this.rows.values()].filter(
      (r) =>
        r.agentId === run.agentId &&
        (r.status === 'queued' || r.status === 'active') &&
        (r.queuedAt.getTime() < run.queuedAt.getTime() ||
          (r.queuedAt.getTime() === run.queuedAt.getTime() && r.id < run.id)),
    ).length;
  }

  async hasOpenRun(agentId: string): Promise<boolean> {
    return [...this.rows.values()].some(
      (r) => r.agentId === agentId && (r.status === 'queued' || r.status === 'active'),
    );
  }

  async findUnstarted(cutoff: Date, limit: number, agentId?: string): Promise<Array<{ id: string; agentId: string }>> {
    return [...this.rows.values()]
      .filter(
        (r) =>
          r.status === 'queued' &&
          r.deliveryId === null &&
          r.triggeredBy !== 'webhook' &&
          r.queuedAt.getTime() < cutoff.getTime() &&
          (agentId === undefined || r.agentId === agentId),
      )
      .sort((a, b) => a.queuedAt.getTime() - b.queuedAt.getTime())
      .slice(0, limit)
      .map((r) => ({ id: r.id, agentId: r.agentId }));
  }

  async deleteIfQueued(id: string): Promise<void> {
    this.calls.push(['deleteIfQueued', id]);
    if (this.rows.get(id)?.status === 'queued') {
      this.rows.delete(id);
    }
  }

  async findById(id: string): Promise<RunEntity | null> {
    return this.rows.get(id) ?? null;
  }

  async findByIdOrFail(id: string): Promise<RunEntity> {
    const row = this.rows.get(id);
    if (row === undefined) {
      throw new Error(`no run ${id}`);
    }
    return row;
  }

  async findByDelivery(agentId: string, deliveryId: string): Promise<RunEntity | null> {
    return [...this.rows.values()].find((r) => r.agentId === agentId && r.deliveryId === deliveryId) ?? null;
  }

  async findByDeliveryOrFail(agentId: string, deliveryId: string): Promise<RunEntity> {
    const row = await this.findByDelivery(agentId, deliveryId);
    if (row === null) {
      throw new Error(`no run of delivery ${deliveryId}`);
    }
    return row;
  }

  async findInScope(scope: Scope, runId: string): Promise<RunEntity | null> {
    this.calls.push(['findInScope', runId]);
    const run = this.rows.get(runId);
    const owner = run === undefined ? undefined : this.agents.get(run.agentId);
    if (run === undefined || owner === undefined) {
      return null;
    }
    const mine =
      scope.workspace !== null
        ? owner.workspaceId === scope.workspace.id
        : owner.userId === scope.user.id && owner.workspaceId === null;
    return mine ? run : null;
  }

  async markCancelled(id: string): Promise<EndedRun | null> {
    this.calls.push(['markCancelled', id]);
    const row = this.rows.get(id);
    return row === undefined ? null : this.end(row);
  }

  async cancelUnendedOfAgent(agentId: string): Promise<EndedRun[]> {
    const ended: EndedRun[] = [];
    for (const row of this.rows.values()) {
      const done = row.agentId === agentId ? this.end(row) : null;
      if (done !== null) {
        ended.push(done);
      }
    }
    return ended;
  }

  /** Newest first by (created_at, id), `limit + 1` rows after the cursor, as the keyset query reads them. */
  async listForAgent(agentId: string, query: PageQuery): Promise<RunEntity[]> {
    const key = (r: RunEntity): [number, string] => [r.createdAt.getTime(), r.id];
    const before = (a: [number, string], b: [number, string]): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
    const cursor =
      query.cursor === undefined ? undefined : ([query.cursor.at.getTime(), query.cursor.id] as [number, string]);
    return [...this.rows.values()]
      .filter((r) => r.agentId === agentId && (cursor === undefined || before(key(r), cursor)))
      .sort((a, b) => (before(key(a), key(b)) ? 1 : -1))
      .slice(0, query.limit + 1);
  }

  async findArchive(runId: string): Promise<RunArchiveEntity | null> {
    return this.archives.get(runId) ?? null;
  }

  /** A queued or active row ended as cancelled (null when it had ended). */
  private end(row: RunEntity): EndedRun | null {
    if (row.status !== 'queued' && row.status !== 'active') {
      return null;
    }
    row.status = 'cancelled';
    row.endedAt = new Date();
    return { triggeredBy: row.triggeredBy, startedAt: row.startedAt, endedAt: row.endedAt };
  }
}
