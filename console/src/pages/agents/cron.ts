/**
 * The schedule preview: the same cron library and version as the service (cron-parser, imported by
 * src/agents/agents.service.ts), with the same checks, so what the form accepts and the firings it
 * shows are what the service will accept and schedule.
 */
import { CronExpressionParser } from 'cron-parser';

export type CronPreview = { ok: true; firings: Date[] } | { ok: false; problem: string };

/** The next `count` firings of `cron` in `timezone` after `from`, or why the expression is refused. */
export function previewCron(cron: string, timezone: string, count = 5, from = new Date()): CronPreview {
  const trimmed = cron.trim();
  if (trimmed === '') {
    return { ok: false, problem: 'Enter a cron expression, for example */15 * * * *' };
  }
  // The service takes exactly five fields (no seconds), as Temporal schedules do.
  if (trimmed.split(/\s+/).length !== 5) {
    return { ok: false, problem: 'Must have 5 fields: minute hour day-of-month month day-of-week' };
  }
  try {
    const expression = CronExpressionParser.parse(trimmed, { tz: timezone, strict: false, currentDate: from });
    return { ok: true, firings: expression.take(count).map((d) => d.toDate()) };
  } catch (err) {
    return { ok: false, problem: `Not a valid cron expression: ${(err as Error).message}` };
  }
}

/** The browser's IANA time zones (UTC first), for the time zone select. */
export function timeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...zones.filter((z) => z !== 'UTC')];
}

/** The user's own time zone, the default for a new schedule. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** A firing, written in the schedule's time zone (what the cron expression means) with its offset. */
export function formatInZone(date: Date, timezone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, {
      timeZone: timezone,
      weekday: 'short',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    }).format(date);
  } catch {
    return date.toISOString();
  }
}
