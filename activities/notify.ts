import { ApplicationFailure, Context } from '@temporalio/activity';
import type { NotificationInput } from '../workflows/contracts.js';
import { requireObjectInput } from './failures.js';

/** How one attempt ended: sent (2xx), or nothing to send (agent gone, notify removed, event no longer listed). */
export type NotificationOutcome = { sent: true; status: number } | { sent: false; reason: NotificationSkip };
export type NotificationSkip = 'agent_gone' | 'run_gone' | 'notify_removed' | 'event_not_listed';

/** What an attempt that did not deliver says (never the receiver's body, the URL's query, or the secret). */
export class NotificationNotDelivered extends Error {
  override readonly name = 'NotificationNotDelivered';

  constructor(
    message: string,
    /** The receiver's status; undefined when no answer came (network, refused address, timeout). */
    readonly status: number | undefined,
    /** When the worker's settings shorten the schedule (NOTIFICATION_RETRY_INITIAL_SECONDS): the next wait. */
    readonly nextRetrySeconds?: number,
  ) {
    super(message);
  }
}

/** Sends notifications, filled by the worker with NotificationSenderService. */
export interface NotificationsPort {
  /** One attempt (1-based); throws NotificationNotDelivered when it did not deliver (to be retried). */
  send(input: NotificationInput, attempt: number): Promise<NotificationOutcome>;
}

/** The failure type of an attempt that did not deliver: retried by the notification workflow's policy. */
export const NOTIFICATION_NOT_DELIVERED = 'NOTIFICATION_NOT_DELIVERED';

/** The notification activity (workflows/notification.workflow.ts runs it), over its port. */
export function notifyActivities(deps: { notifications: NotificationsPort }) {
  return {
    async sendNotification(input: NotificationInput): Promise<NotificationOutcome> {
      requireObjectInput(input);
      const { attempt } = Context.current().info;
      try {
        return await deps.notifications.send(input, attempt);
      } catch (err) {
        if (err instanceof NotificationNotDelivered) {
          throw ApplicationFailure.create({
            type: NOTIFICATION_NOT_DELIVERED,
            message: err.message,
            nonRetryable: false,
            ...(err.nextRetrySeconds !== undefined ? { nextRetryDelay: err.nextRetrySeconds * 1000 } : {}),
          });
        }
        throw err;
      }
    },
  };
}
