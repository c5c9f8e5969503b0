import { AppError } from '../common/app-error.js';

/** Why a balance moved: the `reason` of every ledger row the service writes. */
export const LEDGER_REASONS = [
  'signup_grant',
  'purchase',
  'model_turn',
  'chat_turn',
  'admin_adjustment',
  'tier_change',
] as const;
export type LedgerReason = (typeof LEDGER_REASONS)[number];

/** One movement of a balance, as GET /api/billing/ledger answers it. */
export interface LedgerEntry {
  id: string;
  /** Credits added (positive) or taken (negative). */
  amount: number;
  reason: LedgerReason;
  balanceAfter: number;
  /** The run a model turn was charged for; null for every other movement. */
  runId: string | null;
  /** An admin's change of the tier (`tier_change`, amount 0): from which tier to which; null otherwise. */
  tierChange: TierChange | null;
  createdAt: string;
}

/**
 * A `tier_change` row's reference: `tier:<from>:<to>:by:<admin id>:<unique>`, so the ledger keeps who
 * changed the tier and how (the admin's id is kept for operators, not answered to the user).
 */
const TIER_REFERENCE = /^tier:([a-z_]+):([a-z_]+):by:/;

/** The tiers of a tier change (the users feature's names; billing checks them before writing). */
export interface TierChange {
  from: string;
  to: string;
}

export function tierChangeReference(change: TierChange & { by: string }, unique: string): string {
  return `tier:${change.from}:${change.to}:by:${change.by}:${unique}`;
}

export function tierChangeOf(reference: string | null): TierChange | null {
  const match = reference === null ? null : TIER_REFERENCE.exec(reference);
  return match === null ? null : { from: match[1]!, to: match[2]! };
}

/** A run's charge reference is `run:<run id>:<temporal run id>:<activity id>` (activities/index.ts). */
const RUN_REFERENCE = /^run:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):/i;

export function runIdOf(reference: string | null): string | null {
  return reference === null ? null : (RUN_REFERENCE.exec(reference)?.[1] ?? null);
}

/**
 * The ledger's cursor is the id of the last entry shown (ids only grow, and the list is newest
 * first): a positive bigint of at most 18 digits, the pattern the OpenAPI document declares.
 */
export const LEDGER_CURSOR = /^[1-9][0-9]{0,17}$/;

export function encodeLedgerCursor(id: string): string {
  return id;
}

export function decodeLedgerCursor(raw: string): string {
  if (!LEDGER_CURSOR.test(raw)) {
    throw AppError.validation([{ field: 'cursor', message: 'cursor is not a cursor returned by this list' }]);
  }
  return raw;
}
