import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { type Page, type PageQuery, pageOf } from '../common/pagination.js';
import type { RunResponse } from '../runs/run-response.js';
import { RunsService } from '../runs/runs.service.js';
import { TEMPORAL_CLIENT } from '../temporal/temporal.module.js';
import { requireRole, type Scope } from '../workspaces/scope.js';
import {
  AGENT_HANDLERS,
  type ApprovalStatus,
  type DecideApprovalInput,
  FAILURE,
  workflowIds,
} from '../../workflows/contracts.js';
import { type ApprovalRow, ApprovalsRepository } from './approvals.repository.js';
import type { ApprovalDto, DecideApprovalDto } from './dto/approval.dto.js';

export function toApprovalResponse(row: ApprovalRow): ApprovalDto {
  return {
    id: row.id,
    runId: row.runId,
    agentId: row.agentId,
    agentName: row.agentName,
    site: row.siteName,
    siteId: row.siteId,
    tool: row.tool,
    input: row.input,
    scope: row.scope,
    requestedAt: row.requestedAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    status: row.status,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    decidedBy: row.decidedBy !== null ? { userId: row.decidedBy, name: row.decidedByName ?? '' } : null,
    note: row.note,
  };
}

const refusal = (message: string): AppError => AppError.validation([{ field: 'approvalId', message }], message);

/**
 * The approvals inbox and decisions. A decision is checked against the row first (a cheap refusal),
 * then sent to the run's agent queue as the Update `decideApproval`, whose validator is the authority
 * (the row may lag the workflow by a moment); the answer is the run as it is once the decision is recorded.
 */
@Injectable()
export class ApprovalsService {
  private readonly logger = new Logger('Approvals');

  constructor(
    private readonly approvals: ApprovalsRepository,
    private readonly runs: RunsService,
    @Inject(TEMPORAL_CLIENT) private readonly client: Client,
  ) {}

  async list(scope: Scope, status: ApprovalStatus | undefined, query: PageQuery): Promise<Page<ApprovalDto>> {
    const rows = await this.approvals.list(scope, status, query);
    return pageOf(
      rows.map((row) => Object.assign(row, { createdAt: row.requestedAt })),
      query.limit,
      toApprovalResponse,
    );
  }

  async decide(scope: Scope, runId: string, approvalId: string, dto: DecideApprovalDto): Promise<RunResponse> {
    const run = await this.runs.findInScope(scope, runId);
    requireRole(scope, 'member', 'Deciding on an approval');
    const row = UUID.test(approvalId) ? await this.approvals.findOfRun(run.id, approvalId) : null;
    if (row === null) {
      throw refusal('This run has no such approval');
    }
    if (row.status !== 'pending') {
      throw refusal(`This approval is already ${row.status}`);
    }
    if (row.expiresAt.getTime() <= Date.now()) {
      throw refusal('This approval has expired');
    }
    const input: DecideApprovalInput = {
      runId: run.id,
      approvalId: row.id,
      decision: dto.decision,
      note: dto.note ?? null,
      by: { userId: scope.user.id, name: scope.user.name || scope.user.email },
    };
    try {
      await this.client.workflow
        .getHandle(workflowIds.agent(run.agentId))
        .executeUpdate(AGENT_HANDLERS.decideApproval, { args: [input] });
    } catch (err) {
      throw this.mapped(err);
    }
    this.logger.log(`approval ${row.id} of run ${run.id}: ${dto.decision} by user ${scope.user.id}`);
    return this.runs.describe(await this.runs.findInScope(scope, run.id));
  }

  /** The workflow's refusal (its validator's VALIDATION_ERROR, or no queue running) as the API answers it. */
  private mapped(err: unknown): unknown {
    if (err instanceof WorkflowNotFoundError) {
      return refusal('The run is not waiting for a decision');
    }
    if (
      err instanceof WorkflowUpdateFailedError &&
      err.cause instanceof ApplicationFailure &&
      err.cause.type === FAILURE.validationError
    ) {
      return refusal(err.cause.message);
    }
    return err;
  }
}
