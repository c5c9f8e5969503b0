import type { RequestApprovalInput, SettleApprovalInput } from '../../workflows/contracts.js';
import type { ApprovalDecidedEntryDto, ApprovalRequestedEntryDto } from './dto/timeline-entry.dto.js';

const DECISIONS: Record<SettleApprovalInput['status'], ApprovalDecidedEntryDto['decision']> = {
  approved: 'approve',
  denied: 'deny',
  expired: 'expired',
  cancelled: 'cancelled',
};

/**
 * The timeline's entry of an approvals activity the run scheduled (timeline.ts): requestApproval is
 * `approval_requested`, settleApproval `approval_decided` (each once, at its scheduled event: a retried
 * activity is scheduled once). Undefined for any other activity.
 */
export function approvalEntryOf(
  activityType: string,
  input: unknown,
  at: string,
): ApprovalRequestedEntryDto | ApprovalDecidedEntryDto | undefined {
  if (activityType === 'requestApproval') {
    const request = input as RequestApprovalInput;
    return {
      at,
      type: 'approval_requested',
      approvalId: request.approvalId,
      site: request.siteName,
      siteId: request.siteId,
      tool: request.tool,
      input: request.input,
      scope: request.scope,
      expiresAt: request.expiresAt,
    };
  }
  if (activityType === 'settleApproval') {
    const settled = input as SettleApprovalInput;
    return {
      at,
      type: 'approval_decided',
      approvalId: settled.approvalId,
      decision: DECISIONS[settled.status],
      by: settled.by === null || settled.by === undefined ? null : { userId: settled.by.userId, name: settled.by.name },
      note: settled.note ?? null,
    };
  }
  return undefined;
}
