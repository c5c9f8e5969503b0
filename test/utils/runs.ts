import { randomUUID } from 'node:crypto';
import type { RunEntity } from '../../src/runs/run.entity.js';
import type { RunsRepository } from '../../src/runs/runs.repository.js';
import type { Http } from './http.js';

export interface RunView {
  id: string;
  status: string;
  startedAt: string | null;
  endedAt: string | null;
  queuedAt: string;
  triggeredBy: string;
  error: { error: string; code: string } | null;
  usage: { inputTokens: number; outputTokens: number; credits: number };
  timeline: Array<{ type: string; at: string } & Record<string, any>>;
  payload: unknown;
  temporal: { workflowId: string; runId: string | null };
}

/** Polls a run until its status is one of `statuses` (never sleeps blindly: a deadline bounds it). */
export async function waitForRun(
  http: Http,
  token: string,
  runId: string,
  statuses: string[] = ['completed', 'failed', 'cancelled'],
  timeoutMs = 60_000,
): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  let last: RunView | undefined;
  while (Date.now() < deadline) {
    const res = await http.get<RunView>(`/api/runs/${runId}`, { token });
    if (res.status === 200) {
      last = res.body;
      if (statuses.includes(last.status)) {
        return last;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `run ${runId} did not reach ${statuses.join('/')} in ${timeoutMs} ms (last: ${JSON.stringify(last)?.slice(0, 2000)})`,
  );
}

/** Polls until `check` holds. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) {
      return value;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** A new webhook run's row as the intake writes it (not saved): for the statements' plans and benches. */
export function queuedWebhookRow(runs: RunsRepository, ids: { agentId: string; userId: string }): RunEntity {
  return runs.create({
    id: randomUUID(),
    agentId: ids.agentId,
    userId: ids.userId,
    status: 'queued',
    triggeredBy: 'webhook',
    payload: null,
    input: null,
    systemPromptSource: 'agent',
    deliveryId: randomUUID(),
    workflowId: 'agent-x',
    temporalRunId: null,
    error: null,
    usage: { inputTokens: 0, outputTokens: 0, credits: 0 },
    queuedAt: new Date(),
  });
}
