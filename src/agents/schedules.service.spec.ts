import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { type Client, ScheduleNotFoundError } from '@temporalio/client';
import { type Settings } from '../config/settings.js';
import { SCHEDULE_DESCRIBE_TIMEOUT_MS, SchedulesService } from './schedules.service.js';

/** A Temporal client whose schedule handles answer `describe` as the test says. */
function serviceWith(describe: () => Promise<unknown>): { service: SchedulesService; ids: string[] } {
  const ids: string[] = [];
  const client = {
    connection: {},
    options: { namespace: 'default', dataConverter: {} },
    schedule: {
      getHandle: (id: string) => {
        ids.push(id);
        return { describe };
      },
    },
  } as unknown as Client;
  return { service: new SchedulesService(client, { temporalTaskQueue: 'agentsite' } as Settings), ids };
}

const description = {
  info: { nextActionTimes: [new Date('2026-12-01T08:00:00.000Z')], numActionsSkippedOverlap: 2 },
  state: { paused: false },
};

describe('SchedulesService.describe', () => {
  let warn: ReturnType<typeof jest.spyOn>;

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.useRealTimers();
    warn.mockRestore();
  });

  it("gives the schedule's next firing, skipped firings and state", async () => {
    const { service, ids } = serviceWith(() => Promise.resolve(description));
    await expect(service.describe('a1')).resolves.toEqual({
      nextRunAt: '2026-12-01T08:00:00.000Z',
      skippedOverlaps: 2,
      paused: false,
    });
    expect(ids).toEqual(['schedule-a1']);
    expect(warn).not.toHaveBeenCalled();
  });

  it('answers null for a schedule that does not exist', async () => {
    const { service } = serviceWith(() => Promise.reject(new ScheduleNotFoundError('gone', 'schedule-a1')));
    await expect(service.describe('a1')).resolves.toBeNull();
    expect(warn).not.toHaveBeenCalled();
  });

  it('gives up on a Temporal that does not answer, after the bound and not before, and logs it', async () => {
    jest.useFakeTimers();
    const { service } = serviceWith(() => new Promise(() => undefined));
    let settled = false;
    const answer = service.describe('a1').then((value) => {
      settled = true;
      return value;
    });
    await jest.advanceTimersByTimeAsync(SCHEDULE_DESCRIBE_TIMEOUT_MS - 1);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(answer).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      `the schedule of agent a1 was not described: no answer within ${SCHEDULE_DESCRIBE_TIMEOUT_MS} ms`,
    );
  });

  it('serves without the schedule when Temporal fails, and a late failure is not left unhandled', async () => {
    const { service } = serviceWith(() => Promise.reject(new Error('14 UNAVAILABLE: connection refused')));
    await expect(service.describe('a1')).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith('the schedule of agent a1 was not described: 14 UNAVAILABLE: connection refused');

    jest.useFakeTimers();
    let fail!: (err: Error) => void;
    const late = serviceWith(() => new Promise((_, reject) => (fail = reject)));
    const answer = late.service.describe('a2');
    await jest.advanceTimersByTimeAsync(SCHEDULE_DESCRIBE_TIMEOUT_MS);
    await expect(answer).resolves.toBeUndefined();
    jest.useRealTimers();
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      fail(new Error('DEADLINE_EXCEEDED'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
