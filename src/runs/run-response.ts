import type { ApprovalScope, RunTrigger } from '../../workflows/contracts.js';
import type { RunEntity, RunStatus } from './run.entity.js';
import type { TimelineEntry } from './timeline.js';

/** The call a run waits on for a person's decision (its pending approval). */
export interface RunAwaiting {
  approvalId: string;
  site: string;
  tool: string;
  scope: ApprovalScope;
  expiresAt: string;
}

/** A run's row as the API reads it: with the call it waits on, when the read looked (else null). */
export type RunView = RunEntity & { awaiting?: RunAwaiting | null };

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
  /** The call it waits on for a decision (an active run with a pending approval); null otherwise. */
  awaiting: RunAwaiting | null;
  timeline?: TimelineEntry[];
}

export function toRunResponse(run: RunView): RunResponse {
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
    awaiting: run.status === 'active' ? (run.awaiting ?? null) : null,
  };
}
