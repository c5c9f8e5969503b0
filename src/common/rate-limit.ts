import { type ExecutionContext, Inject, Injectable, type OnApplicationShutdown, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { type DataSource } from 'typeorm';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { AppError } from './app-error.js';
import { postgresCounterStore, postgresExpiredCounters } from './rate-limit-counters.repository.js';
import { ExpiredCounterSweeper, SWEEP_MAX_INTERVAL_MS, sweepIntervalFor } from './rate-limit-sweeper.js';
import { RateLimitReconciler, type ReconciledLimiter } from './reconciled-rate-limit.js';

/** The table migrations create for rate-limiter-flexible; shared by every API and worker process. */
export const RATE_LIMIT_TABLE = 'rate_limits';

export const NO_RATE_LIMIT = Symbol('noRateLimit');

/** Set on the request for routes marked @NoRateLimit(), so the JWT strategy skips the per-user counter too. */
export const RATE_LIMIT_EXEMPT = Symbol('rateLimitExempt');

/** The route is not rate limited (health probes of load balancers and orchestrators). */
export const NoRateLimit = (): MethodDecorator & ClassDecorator => SetMetadata(NO_RATE_LIMIT, true);

export const COUNT_WHILE_STORE_UP = Symbol('countWhileStoreUp');

/**
 * The route is counted against the per-address limit, but answered as usual when the counter's store
 * (PostgreSQL) cannot be reached: GET /api/health must say the database is down rather than fail
 * with it.
 */
export const CountWhileStoreUp = (): MethodDecorator => SetMetadata(COUNT_WHILE_STORE_UP, true);

export function countsOnlyWhileStoreUp(reflector: Reflector, context: ExecutionContext): boolean {
  return reflector.get<boolean>(COUNT_WHILE_STORE_UP, context.getHandler()) === true;
}

export function rateLimitExempt(reflector: Reflector, context: ExecutionContext): boolean {
  return reflector.getAllAndOverride<boolean>(NO_RATE_LIMIT, [context.getHandler(), context.getClass()]) === true;
}

/** One sweeper of ended windows per process (per data source), started by the first limiter. */
const sweepers = new WeakMap<DataSource, ExpiredCounterSweeper>();

/** Starts (once per data source) the sweep of the counters whose window ended, at most every intervalMs. */
export function sweepExpiredCounters(dataSource: DataSource, intervalMs: number): ExpiredCounterSweeper {
  let sweeper = sweepers.get(dataSource);
  if (sweeper === undefined) {
    sweeper = new ExpiredCounterSweeper(postgresExpiredCounters(dataSource, RATE_LIMIT_TABLE), intervalMs);
    sweepers.set(dataSource, sweeper);
  }
  sweeper.start(intervalMs);
  return sweeper;
}

/**
 * Builds a limiter whose counters live in PostgreSQL, the one store every API and worker process
 * shares. No in-memory fallback: a per-process counter cannot hold a limit across processes (each
 * would allow the whole limit again, from zero), and the requests these limits guard need the
 * database anyway. When the counter cannot be read, the consume fails (a 500, or a retried activity).
 */
export function postgresLimiter(dataSource: DataSource, keyPrefix: string, points: number, durationSeconds: number) {
  const pool = (dataSource.driver as unknown as { master: unknown }).master;
  keyPrefix = limitKeyPrefix(keyPrefix, points, durationSeconds);
  sweepExpiredCounters(dataSource, Math.min(sweepIntervalFor(durationSeconds), SWEEP_MAX_INTERVAL_MS));
  return new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: RATE_LIMIT_TABLE,
    tableCreated: true,
    keyPrefix,
    points,
    duration: durationSeconds,
    // Not the library's cleanup (an unbounded DELETE every 5 minutes of the rows that ended an hour
    // ago, per limiter): the process's sweeper deletes every limiter's ended rows in bounded batches.
    clearExpiredByTimeout: false,
  });
}

/** One reconciler per process (per data source): its heartbeats count this process once, whichever limits it holds. */
const reconcilers = new WeakMap<DataSource, RateLimitReconciler>();

/** The process's RateLimitReconciler on this data source (made on first use). */
export function sharedReconciler(dataSource: DataSource): RateLimitReconciler {
  let reconciler = reconcilers.get(dataSource);
  if (reconciler === undefined) {
    reconciler = new RateLimitReconciler(postgresCounterStore(dataSource, RATE_LIMIT_TABLE));
    reconcilers.set(dataSource, reconciler);
  }
  return reconciler;
}

/**
 * A limiter counted in the process and reconciled with the shared table (see RateLimitReconciler):
 * same keys and windows as postgresLimiter's, no statement of its own per consume while the
 * process's unconfirmed points stay under the allowance; exact (each consume waits for the store's
 * count) for limits under 40.
 */
export function reconciledLimiter(
  dataSource: DataSource,
  name: string,
  points: number,
  durationSeconds: number,
): ReconciledLimiter {
  sweepExpiredCounters(dataSource, Math.min(sweepIntervalFor(durationSeconds), SWEEP_MAX_INTERVAL_MS));
  return sharedReconciler(dataSource).limiter(limitKeyPrefix(name, points, durationSeconds), points, durationSeconds);
}

/** What consumeOrThrow needs of a limiter: rate-limiter-flexible's consume, rejecting with RateLimiterRes. */
export interface PointLimiter {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
}

/**
 * Counters are per limit configuration: a changed limit starts fresh counters instead of inheriting
 * windows of another length.
 */
function limitKeyPrefix(name: string, points: number, durationSeconds: number): string {
  return `${name}-${points}-${durationSeconds}`;
}

/** Consumes one point; answers RATE_LIMITED with Retry-After once the window's points are spent. */
export async function consumeOrThrow(
  limiter: PointLimiter,
  key: string,
  code: 'RATE_LIMITED' | 'OUTGOING_RATE_LIMITED',
  message: string,
): Promise<void> {
  try {
    await limiter.consume(key, 1);
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) {
      throw new AppError(code, message, undefined, Math.ceil(rejection.msBeforeNext / 1000));
    }
    throw rejection;
  }
}

/**
 * The API's own limits (per address, per user): counted in each process and reconciled with the
 * shared table (see RateLimitReconciler), so a request writes nothing itself; held across processes
 * within 10 % of the limit (exact for limits under 40). Same keys and windows as postgresLimiter's.
 */
@Injectable()
export class ApiRateLimits implements OnApplicationShutdown {
  readonly perIp: ReconciledLimiter;
  readonly perUser: ReconciledLimiter;
  private readonly reconciler: RateLimitReconciler;
  private readonly sweeper: ExpiredCounterSweeper;

  constructor(@InjectDataSource() dataSource: DataSource, @Inject(SETTINGS) settings: Settings) {
    this.reconciler = sharedReconciler(dataSource);
    const window = settings.rateLimitWindowSeconds;
    this.sweeper = sweepExpiredCounters(dataSource, sweepIntervalFor(window));
    this.perIp = this.reconciler.limiter(
      limitKeyPrefix('api-ip', settings.rateLimitPerIp, window),
      settings.rateLimitPerIp,
      window,
    );
    this.perUser = this.reconciler.limiter(
      limitKeyPrefix('api-user', settings.rateLimitPerUser, window),
      settings.rateLimitPerUser,
      window,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.sweeper.stop();
    await this.reconciler.close();
  }
}
