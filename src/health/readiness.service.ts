import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Connection } from '@temporalio/client';
import { type DataSource } from 'typeorm';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { hasRecentPoller, timestampMs } from '../temporal/poller-health.js';
import { TEMPORAL_CONNECTION } from '../temporal/temporal.module.js';
import { pingDatabase } from './database-ping.repository.js';

/** What a readiness answer may say: generic on purpose (the routes are public), details go to the log. */
export const NOT_READY_REASONS = [
  'database unavailable',
  'temporal unavailable',
  'no worker polls the task queue',
  // The worker's own readiness (its HTTP server): its polls not seen by Temporal, or its state.
  'this worker does not poll the task queue',
  'the worker is not running',
] as const;
export type NotReadyReason = (typeof NOT_READY_REASONS)[number];

const CHECK_TIMEOUT_MS = 2_000;

/** Temporal's task queue types: a worker polls both, and a run needs both. */
const TASK_QUEUE_TYPES = [1, 2] as const;

/** `work`, or a rejection once CHECK_TIMEOUT_MS has passed: a probe answers in bounded time. */
async function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Readiness as the service's parts see it: PostgreSQL answers, Temporal answers, and Temporal saw a
 * worker poll both sides of the task queue within WORKER_POLL_MAX_AGE_SECONDS (two minutes by
 * default: an idle worker's long poll lasts up to a minute, so a worker that died is noticed within
 * that window, not at once).
 */
@Injectable()
export class ReadinessService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(TEMPORAL_CONNECTION) private readonly temporal: Connection,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * The reasons the service is not ready (none: ready). `identity`: only that worker's polls count
   * (the worker's own readiness). `onDown` hears each failed check's real error, for the log.
   */
  async notReady(options: {
    identity?: string;
    onDown?: (component: string, detail: string) => void;
  }): Promise<NotReadyReason[]> {
    const failed =
      (reason: NotReadyReason, component: string) =>
      (err: unknown): NotReadyReason => {
        options.onDown?.(component, err instanceof Error ? err.message : String(err));
        return reason;
      };
    const [database, temporal] = await Promise.all([
      bounded(pingDatabase(this.dataSource)).then(() => undefined, failed('database unavailable', 'the database')),
      bounded(this.polled(options.identity)).catch(failed('temporal unavailable', 'Temporal')),
    ]);
    return [database, temporal].filter((reason): reason is NotReadyReason => reason !== undefined);
  }

  /** Undefined when a worker (the one named) polled both sides recently; else the reason. */
  private async polled(identity: string | undefined): Promise<NotReadyReason | undefined> {
    // No connection.withDeadline: see HealthController (its AsyncLocalStorage slows the whole process).
    const queues = await Promise.all(
      TASK_QUEUE_TYPES.map((taskQueueType) =>
        this.temporal.workflowService.describeTaskQueue({
          namespace: this.settings.temporalNamespace,
          taskQueue: { name: this.settings.temporalTaskQueue },
          taskQueueType,
        }),
      ),
    );
    const now = Date.now();
    const polling = queues.every((queue) =>
      hasRecentPoller(
        (queue.pollers ?? []).map((poller) => ({
          identity: poller.identity,
          lastAccessMs: timestampMs(poller.lastAccessTime as never),
        })),
        now,
        this.settings.workerPollMaxAgeSeconds * 1000,
        identity,
      ),
    );
    return polling
      ? undefined
      : identity === undefined
        ? 'no worker polls the task queue'
        : 'this worker does not poll the task queue';
  }
}
