import { describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { NotificationInput } from '../workflows/contracts.js';
import {
  NOTIFICATION_NOT_DELIVERED,
  NotificationNotDelivered,
  notifyActivities,
  type NotificationsPort,
} from './notify.js';

const input: NotificationInput = { messageId: 'msg_r_run_completed', event: 'run_completed', agentId: 'a', runId: 'r' };

function run(port: NotificationsPort, attempt = 1): Promise<unknown> {
  const env = new MockActivityEnvironment({ attempt });
  return env.run(notifyActivities({ notifications: port }).sendNotification, input);
}

describe('sendNotification', () => {
  it('hands the attempt to the port and answers its outcome', async () => {
    const attempts: number[] = [];
    const port: NotificationsPort = {
      send: async (_input, attempt) => {
        attempts.push(attempt);
        return { sent: true, status: 202 };
      },
    };
    expect(await run(port, 4)).toEqual({ sent: true, status: 202 });
    expect(attempts).toEqual([4]);
  });

  it('an attempt that did not deliver is a retryable failure, with the next wait only when the port names one', async () => {
    const failing = (nextRetrySeconds?: number): NotificationsPort => ({
      send: async () => {
        throw new NotificationNotDelivered('the receiver answered 500', 500, nextRetrySeconds);
      },
    });
    const plain = (await run(failing()).catch((e: unknown) => e)) as ApplicationFailure;
    expect(plain).toBeInstanceOf(ApplicationFailure);
    expect(plain).toMatchObject({
      type: NOTIFICATION_NOT_DELIVERED,
      nonRetryable: false,
      message: 'the receiver answered 500',
    });
    expect(plain.nextRetryDelay).toBeUndefined();
    const shortened = (await run(failing(2)).catch((e: unknown) => e)) as ApplicationFailure;
    expect(shortened.nextRetryDelay).toBe(2000);
  });
});
