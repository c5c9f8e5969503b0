import { Injectable } from '@nestjs/common';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { AppError, type FieldProblem } from '../common/app-error.js';
import type { RunAwaiting, RunResponse } from '../runs/run-response.js';
import type { Scope } from '../workspaces/scope.js';
import type { McpListedTool } from './mcp-site-tools.js';

/** The tool that approves or denies a run's pending tool call (what the console's Approve and Deny do). */
export const DECIDE_APPROVAL_TOOL = 'decide_approval';

const NOTE_MAX = 1000;

/** A decision as decide_approval takes it (the body of POST /api/runs/:id/approvals/:approvalId, plus the ids). */
export interface McpDecision {
  runId: string;
  approvalId: string;
  decision: 'approve' | 'deny';
  note?: string;
}

export const DECIDE_APPROVAL: McpListedTool = {
  name: DECIDE_APPROVAL_TOOL,
  title: 'Approve or deny an agent’s tool call',
  description:
    'A run of one of your agents that waits for approval before calling a tool (its task or get_run shows ' +
    '`awaiting`) goes on once you decide: approve and the call is made; deny and the agent is told no ' +
    '(with your note). Answers the run with its timeline.',
  inputSchema: {
    type: 'object',
    properties: {
      runId: { type: 'string', description: 'The run id' },
      approvalId: { type: 'string', description: 'The approval id (the run’s awaiting.approvalId)' },
      decision: { type: 'string', enum: ['approve', 'deny'] },
      note: {
        type: ['string', 'null'],
        maxLength: NOTE_MAX,
        description: 'Why (shown in the run’s timeline; a denial gives it to the agent)',
      },
    },
    required: ['runId', 'approvalId', 'decision'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

/** decide_approval's arguments, checked as the REST route checks its body (VALIDATION_ERROR naming the field). */
export function decisionOf(args: Record<string, unknown>): McpDecision {
  const problems: FieldProblem[] = [];
  for (const field of ['runId', 'approvalId'] as const) {
    if (typeof args[field] !== 'string' || args[field] === '') {
      problems.push({ field, message: 'must be a non-empty string' });
    }
  }
  if (args.decision !== 'approve' && args.decision !== 'deny') {
    problems.push({ field: 'decision', message: 'must be "approve" or "deny"' });
  }
  if (args.note !== undefined && args.note !== null && (typeof args.note !== 'string' || args.note.length > NOTE_MAX)) {
    problems.push({ field: 'note', message: `must be a string of at most ${NOTE_MAX} characters` });
  }
  for (const field of Object.keys(args)) {
    if (!['runId', 'approvalId', 'decision', 'note'].includes(field)) {
      problems.push({ field, message: 'is not a field of decide_approval' });
    }
  }
  if (problems.length > 0) {
    throw AppError.validation(problems);
  }
  const { runId, approvalId, decision, note } = args as unknown as McpDecision & { note?: string | null };
  return { runId, approvalId, decision, ...(typeof note === 'string' ? { note } : {}) };
}

/** The run's pending approval, when it waits for one (an active run only). */
export function awaitingOf(run: RunResponse): RunAwaiting | null {
  return run.status === 'active' ? (run.awaiting ?? null) : null;
}

const SCOPE_WORDS: Record<string, string> = {
  write: 'it changes data',
  delete: 'it deletes data',
  admin: 'it administers the site',
};

/**
 * What a waiting run tells an MCP client (a task's statusMessage, a wait-mode answer): the site and the tool,
 * until when, and where to decide (the run's page in the console, or decide_approval).
 */
export function waitingWords(run: RunResponse, awaiting: RunAwaiting, publicBaseUrl: string): string {
  const why = SCOPE_WORDS[awaiting.scope] ?? `its scope is ${awaiting.scope}`;
  return (
    `Run ${run.id} is waiting for approval to call ${awaiting.tool} of ${awaiting.site} (${why}), ` +
    `until ${awaiting.expiresAt}. Approve or deny it in the agentsite console at ${publicBaseUrl}/runs/${run.id}, ` +
    `or with the tool ${DECIDE_APPROVAL_TOOL} (runId "${run.id}", approvalId "${awaiting.approvalId}").`
  );
}

/**
 * decide_approval: the arguments checked, then the decision of POST /api/runs/:id/approvals/:approvalId in the
 * caller's scope (RUN_NOT_FOUND outside it, PERMISSION_DENIED under the member role, VALIDATION_ERROR for an
 * approval that is not the pending one); answers the run with its timeline.
 */
@Injectable()
export class McpApprovals {
  constructor(private readonly approvals: ApprovalsService) {}

  async decide(scope: Scope, args: Record<string, unknown>): Promise<RunResponse> {
    const { runId, approvalId, decision, note } = decisionOf(args);
    return this.approvals.decide(scope, runId, approvalId, { decision, ...(note !== undefined ? { note } : {}) });
  }
}
