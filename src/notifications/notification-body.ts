import type { NotificationEvent } from '../../workflows/contracts.js';
import type { NotificationSource } from './notifications.repository.js';

/** The JSON a receiver gets (docs: agents-and-runs, Notifications). Never a credential or the secret. */
export interface NotificationBody {
  type: NotificationEvent;
  timestamp: string;
  data: {
    agent: { id: string; name: string };
    run: {
      id: string;
      status: string;
      triggeredBy: string;
      startedAt: string | null;
      endedAt: string | null;
      output?: string;
      error?: { error: string; code: string };
    };
    approval?: {
      id: string;
      site: string;
      siteId: string | null;
      tool: string;
      scope: string;
      input: unknown;
      expiresAt: string;
    };
    /** The run's page in the console. */
    consoleUrl: string;
  };
}

const iso = (date: Date | null): string | null => (date === null ? null : new Date(date).toISOString());

/** The body of one notification, from what the repository read (`run` must be there). */
export function notificationBody(
  event: NotificationEvent,
  source: NotificationSource & { run: NonNullable<NotificationSource['run']> },
  publicBaseUrl: string,
  now: Date,
): NotificationBody {
  const { agent, run, approval } = source;
  const output =
    run.status === 'completed' && typeof run.lastEntry?.output === 'string' ? run.lastEntry.output : undefined;
  return {
    type: event,
    timestamp: now.toISOString(),
    data: {
      agent: { id: agent.id, name: agent.name },
      run: {
        id: run.id,
        status: run.status,
        triggeredBy: run.triggeredBy,
        startedAt: iso(run.startedAt),
        endedAt: iso(run.endedAt),
        ...(output !== undefined ? { output } : {}),
        ...(run.error !== null ? { error: { error: run.error.error, code: run.error.code } } : {}),
      },
      ...(event === 'approval_requested' && approval !== null
        ? {
            approval: {
              id: approval.id,
              site: approval.siteName,
              siteId: approval.siteId,
              tool: approval.tool,
              scope: approval.scope,
              input: approval.input,
              expiresAt: new Date(approval.expiresAt).toISOString(),
            },
          }
        : {}),
      consoleUrl: `${publicBaseUrl.replace(/\/+$/, '')}/runs/${run.id}`,
    },
  };
}
