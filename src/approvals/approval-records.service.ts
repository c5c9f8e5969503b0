import { Injectable, Logger } from '@nestjs/common';
import type { ApprovalsPort } from '../../activities/index.js';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import {
  APPROVAL_SCOPES,
  type ApprovalScope,
  type RequestApprovalInput,
  type SettleApprovalInput,
} from '../../workflows/contracts.js';
import { ApprovalRecordsRepository, type RecordResult } from './approval-records.repository.js';

type Execution = { workflowId: string; runId: string };

const OUTCOMES: ReadonlySet<string> = new Set(['approved', 'denied', 'expired', 'cancelled']);
/** The longest note a row keeps (the API refuses longer ones). */
const MAX_NOTE = 1000;

function dateOf(value: unknown): Date | null {
  if (typeof value !== 'string') {
    return null;
  }
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

const text = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * The activities' port for the `approvals` rows (the worker fills ActivityDeps.approvals with it): a
 * run's wait for a decision written when asked (pending) and when over (its outcome). The input is not
 * trusted (see RunRecordsService.startRun): only the execution that runs the run, as its row names it,
 * may write the run's rows, and the row's agent, user and workspace are the run's. Anything else is
 * PERMISSION_DENIED and writes nothing; a malformed input is VALIDATION_ERROR. Ids only in log lines.
 */
@Injectable()
export class ApprovalRecordsService implements ApprovalsPort {
  private readonly logger = new Logger('Approvals');

  constructor(private readonly records: ApprovalRecordsRepository) {}

  async requestApproval(input: RequestApprovalInput, execution: Execution): Promise<void> {
    const requestedAt = dateOf(input.requestedAt);
    const expiresAt = dateOf(input.expiresAt);
    if (
      !this.idsValid(input) ||
      !(APPROVAL_SCOPES as readonly string[]).includes(input.scope) ||
      !text(input.siteName) ||
      !text(input.tool) ||
      requestedAt === null ||
      expiresAt === null ||
      expiresAt < requestedAt
    ) {
      throw this.malformed(input, 'request');
    }
    const result = await this.records.request(input.runId, execution, {
      approvalId: input.approvalId,
      siteId: typeof input.siteId === 'string' && UUID.test(input.siteId) ? input.siteId : null,
      siteName: input.siteName,
      tool: input.tool,
      scope: input.scope as ApprovalScope,
      input: input.input,
      requestedAt,
      expiresAt,
    });
    if (result.bound !== true || result.active !== true) {
      throw this.refused(input, execution, result, 'request');
    }
    if (result.changed === 1) {
      this.logger.log(`approval ${input.approvalId} of run ${input.runId} pending`);
    }
  }

  async settleApproval(input: SettleApprovalInput, execution: Execution): Promise<void> {
    const decidedAt = dateOf(input.decidedAt);
    if (!this.idsValid(input) || !OUTCOMES.has(input.status) || decidedAt === null) {
      throw this.malformed(input, 'settle');
    }
    const by = typeof input.by === 'object' && input.by !== null ? input.by : null;
    const result = await this.records.settle(input.runId, execution, {
      approvalId: input.approvalId,
      status: input.status,
      decidedAt,
      decidedBy: by !== null && typeof by.userId === 'string' && UUID.test(by.userId) ? by.userId : null,
      decidedByName: by !== null && typeof by.name === 'string' ? by.name.slice(0, 200) : null,
      note: typeof input.note === 'string' ? input.note.slice(0, MAX_NOTE) : null,
    });
    if (result.bound !== true) {
      throw this.refused(input, execution, result, 'settle');
    }
    if (result.changed === 1) {
      this.logger.log(`approval ${input.approvalId} of run ${input.runId} ${input.status}`);
    }
  }

  private idsValid(input: { runId?: unknown; approvalId?: unknown }): boolean {
    return [input.runId, input.approvalId].every((id) => typeof id === 'string' && UUID.test(id));
  }

  private malformed(input: { runId?: unknown; approvalId?: unknown }, what: string): AppError {
    this.logger.warn(
      `approval ${what} refused for run ${idOf(input.runId)}, approval ${idOf(input.approvalId)}: malformed input`,
    );
    return new AppError('VALIDATION_ERROR', 'The approval record is malformed');
  }

  private refused(
    input: { runId: string; approvalId: string },
    execution: Execution,
    result: RecordResult,
    what: string,
  ): AppError {
    const why =
      result.bound === null
        ? 'no such run'
        : result.bound === false
          ? 'the run is not this workflow execution’s'
          : 'the run is not active';
    this.logger.warn(
      `approval ${what} refused for run ${input.runId}, approval ${input.approvalId}, asked by workflow ${execution.workflowId}: ${why}`,
    );
    return new AppError('PERMISSION_DENIED', 'Only the workflow that runs a run may record its approvals');
  }
}

/** An id as a log line may show it: a UUID, else a mark that it was not one (never the input itself). */
function idOf(value: unknown): string {
  return typeof value === 'string' && UUID.test(value) ? value : '(not an id)';
}
