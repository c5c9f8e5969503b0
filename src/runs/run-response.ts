import type { RunTrigger } from '../../workflows/contracts.js';
import type { RunEntity, RunStatus } from './run.entity.js';
import type { TimelineEntry } from './timeline.js';

/** A run as the API answers it (GET /runs/:id adds its timeline). */
export interface RunResponse {
  id: string;
  agentId: string;
  status: RunStatus;
  triggeredBy: RunTrigger;
  payload: unknown;
  input: string | null;
  systemPromptSource: 'agent' | 'webhook_action';
  queuedAt: string;
  startedAt: string | null;
  endedAt: string | null;
  error: { error: string; code: string } | null;
  usage: { inputTokens: number; outputTokens: number; credits: number };
  temporal: { workflowId: string; runId: string | null };
  timeline?: TimelineEntry[];
}

export function toRunResponse(run: RunEntity): RunResponse {
  return {
    id: run.id,
    agentId: run.agentId,
    status: run.status,
    triggeredBy: run.triggeredBy,
    payload: run.payload ?? null,
    input: run.input,
    systemPromptSource: run.systemPromptSource,
    queuedAt: run.queuedAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    endedAt: run.endedAt?.toISOString() ?? null,
    error: run.error,
    usage: run.usage,
    temporal: { workflowId: run.workflowId, runId: run.temporalRunId },
  };
}
