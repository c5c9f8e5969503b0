import { describe, expect, it } from '@jest/globals';
import { AppError } from '../common/app-error.js';
import { standIn } from '../common/testing/stand-in.js';
import type { RequestApprovalInput, SettleApprovalInput } from '../../workflows/contracts.js';
import type {
  ApprovalOutcomeRow,
  ApprovalRecordsRepository,
  PendingApprovalRow,
  RecordResult,
} from './approval-records.repository.js';
import { ApprovalRecordsService } from './approval-records.service.js';

/** The repository's answers as scripted; what it was asked to write. */
class FakeApprovalRecords implements Pick<ApprovalRecordsRepository, 'request' | 'settle'> {
  answer: RecordResult = { bound: true, active: true, changed: 1 };
  readonly requested: PendingApprovalRow[] = [];
  readonly settled: ApprovalOutcomeRow[] = [];

  request(_runId: string, _execution: unknown, row: PendingApprovalRow): Promise<RecordResult> {
    this.requested.push(row);
    return Promise.resolve(this.answer);
  }

  settle(_runId: string, _execution: unknown, outcome: ApprovalOutcomeRow): Promise<RecordResult> {
    this.settled.push(outcome);
    return Promise.resolve(this.answer);
  }
}

const RUN = '11111111-1111-4111-8111-111111111111';
const APPROVAL = '22222222-2222-4222-8222-222222222222';
const SITE = '33333333-3333-4333-8333-333333333333';
const USER = '44444444-4444-4444-8444-444444444444';
const execution = { workflowId: 'agent-x', runId: 'temporal-run' };

const request = (overrides: Partial<RequestApprovalInput> = {}): RequestApprovalInput => ({
  runId: RUN,
  approvalId: APPROVAL,
  siteId: SITE,
  siteName: 'Notes',
  tool: 'create_note',
  input: { title: 'x' },
  scope: 'write',
  requestedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T00:01:00.000Z',
  ...overrides,
});

const settle = (overrides: Partial<SettleApprovalInput> = {}): SettleApprovalInput => ({
  runId: RUN,
  approvalId: APPROVAL,
  status: 'approved',
  by: { userId: USER, name: 'Ada' },
  note: 'ok',
  decidedAt: '2026-01-01T00:00:30.000Z',
  ...overrides,
});

function service(): { records: FakeApprovalRecords; approvals: ApprovalRecordsService } {
  const records = new FakeApprovalRecords();
  return { records, approvals: new ApprovalRecordsService(standIn<ApprovalRecordsRepository>(records)) };
}

async function codeOf(work: Promise<unknown>): Promise<string | undefined> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return err instanceof AppError ? err.code : undefined;
}

describe('ApprovalRecordsService.requestApproval', () => {
  it('writes the pending row of what the call is', async () => {
    const { records, approvals } = service();
    await approvals.requestApproval(request(), execution);
    expect(records.requested).toEqual([
      {
        approvalId: APPROVAL,
        siteId: SITE,
        siteName: 'Notes',
        tool: 'create_note',
        scope: 'write',
        input: { title: 'x' },
        requestedAt: new Date('2026-01-01T00:00:00.000Z'),
        expiresAt: new Date('2026-01-01T00:01:00.000Z'),
      },
    ]);
  });

  it('refuses a malformed input (VALIDATION_ERROR) before writing anything', async () => {
    const { records, approvals } = service();
    for (const bad of [
      request({ runId: 'not-a-uuid' }),
      request({ approvalId: "1' OR 1=1" }),
      request({ scope: 'read' as never }),
      request({ tool: '' }),
      request({ expiresAt: 'tomorrow' }),
      request({ expiresAt: '2025-12-31T00:00:00.000Z' }),
    ]) {
      expect(await codeOf(approvals.requestApproval(bad, execution))).toBe('VALIDATION_ERROR');
    }
    expect(records.requested).toEqual([]);
  });

  it('refuses (PERMISSION_DENIED) when the run is not this execution’s, not active, or not there', async () => {
    const { records, approvals } = service();
    for (const answer of [
      { bound: false, active: true, changed: 0 },
      { bound: true, active: false, changed: 0 },
      { bound: null, active: null, changed: 0 },
    ]) {
      records.answer = answer;
      expect(await codeOf(approvals.requestApproval(request(), execution))).toBe('PERMISSION_DENIED');
    }
  });

  it('is idempotent: a retried request that wrote nothing new is fine', async () => {
    const { records, approvals } = service();
    records.answer = { bound: true, active: true, changed: 0 };
    await expect(approvals.requestApproval(request(), execution)).resolves.toBeUndefined();
  });

  it('keeps a site id that is not a uuid out of the row', async () => {
    const { records, approvals } = service();
    await approvals.requestApproval(request({ siteId: 'site-1' }), execution);
    expect(records.requested[0]?.siteId).toBeNull();
  });
});

describe('ApprovalRecordsService.settleApproval', () => {
  it('writes the outcome, who and the note', async () => {
    const { records, approvals } = service();
    await approvals.settleApproval(settle(), execution);
    expect(records.settled).toEqual([
      {
        approvalId: APPROVAL,
        status: 'approved',
        decidedAt: new Date('2026-01-01T00:00:30.000Z'),
        decidedBy: USER,
        decidedByName: 'Ada',
        note: 'ok',
      },
    ]);
  });

  it('names nobody for an expired or cancelled wait, and no user id that is not one', async () => {
    const { records, approvals } = service();
    await approvals.settleApproval(settle({ status: 'expired', by: null, note: null }), execution);
    await approvals.settleApproval(settle({ status: 'denied', by: { userId: 'u1', name: 'Ada' } }), execution);
    expect(records.settled.map((o) => [o.status, o.decidedBy, o.decidedByName])).toEqual([
      ['expired', null, null],
      ['denied', null, 'Ada'],
    ]);
  });

  it('refuses a malformed outcome (VALIDATION_ERROR) and another execution’s (PERMISSION_DENIED)', async () => {
    const { records, approvals } = service();
    expect(await codeOf(approvals.settleApproval(settle({ status: 'pending' as never }), execution))).toBe(
      'VALIDATION_ERROR',
    );
    expect(records.settled).toEqual([]);
    records.answer = { bound: false, changed: 0 };
    expect(await codeOf(approvals.settleApproval(settle(), execution))).toBe('PERMISSION_DENIED');
    // A row decided already (nothing changed) is fine: a retried settle.
    records.answer = { bound: true, changed: 0 };
    await expect(approvals.settleApproval(settle(), execution)).resolves.toBeUndefined();
  });
});
