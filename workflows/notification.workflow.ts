import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { NotificationInput } from './approvals.js';

/**
 * One delivery to the agent's notify URL, retried until the receiver answers 2xx: 10 s, then twice
 * as long each time up to an hour, for a day at most (the activity reads the agent again on every
 * attempt, so a URL fixed meanwhile is used, and a notify removed ends the retries).
 */
const delivery = proxyActivities<Activities>({
  // The POST itself is bounded by its 10 s timeout; the rest is reading the rows.
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/**
 * A notification (`notify-<messageId>`), started by a run's agent queue as an abandoned child: the
 * run goes on (and its queue may continue as new) while this retries. Ids only in its input.
 */
export async function notificationWorkflow(input: NotificationInput): Promise<void> {
  await delivery.sendNotification(input);
}
