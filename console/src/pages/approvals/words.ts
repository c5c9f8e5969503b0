/**
 * Approvals in words: the types of the API's answers (from the generated schema, by path), what a
 * scope means to a person, and times relative to now ("in 23 hours", "5 minutes ago").
 */
import type { paths } from '../../api/schema.gen';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type ApprovalPage = Json<paths['/api/approvals']['get']['responses'][200]>;
export type Approval = ApprovalPage['items'][number];
export type ApprovalScope = Approval['scope'];
export type ApprovalStatus = Approval['status'];

/** What a call of this scope does, as a person reads it ("This call changes data"). */
export const SCOPE_WORDS: Record<ApprovalScope, string> = {
  write: 'changes data',
  delete: 'deletes data',
  admin: 'administers the site',
};

/** The choices of an agent's policy, in the agent form and on the agent's page. */
export const SCOPE_CHOICES: Record<ApprovalScope, string> = {
  write: 'Calls that change data (create, update)',
  delete: 'Calls that delete data',
  admin: 'Calls that administer the site (settings, members, keys)',
};

export const STATUS_WORDS: Record<ApprovalStatus, string> = {
  pending: 'Waiting for a decision',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'No decision in time',
  cancelled: 'Run cancelled',
};

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "in 23 hours", "5 minutes ago", "now" (under a minute either way). */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const diff = new Date(iso).getTime() - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) {
      return relative.format(Math.round(diff / ms), unit);
    }
  }
  return diff >= 0 ? 'in less than a minute' : 'less than a minute ago';
}

/** A policy's wait in words: "1 day", "2 hours 30 minutes", "1 minute". */
export function durationWords(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const parts: string[] = [];
  const add = (n: number, one: string) => {
    if (n > 0) {
      parts.push(`${n} ${one}${n === 1 ? '' : 's'}`);
    }
  };
  add(days, 'day');
  add(hours, 'hour');
  add(minutes, 'minute');
  return parts.length === 0 ? `${seconds} seconds` : parts.join(' ');
}
