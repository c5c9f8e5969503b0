import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { type DataSource } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { reconciledLimiter, sharedReconciler } from '../common/rate-limit.js';
import type { ReconciledLimiter } from '../common/reconciled-rate-limit.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { SiteEntity } from '../vault/site.entity.js';

/** The outgoing limit of the specification: tool calls per minute per site domain. */
export const OUTGOING_WINDOW_SECONDS = 60;

/** The domain key of the outgoing limit: host, plus port when it is not 443. */
export function outgoingKey(serverUrl: string): string {
  return new URL(serverUrl).host.toLowerCase();
}

/** Whose share of a domain's budget a call uses: the vault the site is in (a workspace's, or a user's). */
export function vaultKey(site: Pick<SiteEntity, 'userId' | 'workspaceId'>): string {
  return site.workspaceId !== null ? `workspace:${site.workspaceId}` : `user:${site.userId}`;
}

/**
 * The outgoing budget, counted in PostgreSQL across all processes: per site domain
 * (OUTGOING_CALLS_PER_MINUTE) and, within it, per vault (OUTGOING_CALLS_PER_MINUTE_PER_USER). Tool
 * calls and the conformance check's requests take their slots here. Counted as the API's own limits
 * are (RateLimitReconciler): a call of a budget of 40 or more takes its slot without a statement of
 * its own (the process sends its counts every 100 ms; all processes together admit less than 10 %
 * beyond the budget); a smaller budget (the default 10) is exact, each call waiting for the count.
 */
@Injectable()
export class OutgoingLimits implements OnApplicationShutdown {
  private readonly outgoing: ReconciledLimiter;
  private readonly outgoingPerVault: ReconciledLimiter | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SETTINGS) settings: Settings,
    private readonly metrics: MetricsService,
  ) {
    this.outgoing = reconciledLimiter(dataSource, 'outgoing', settings.outgoingCallsPerMinute, OUTGOING_WINDOW_SECONDS);
    // A share equal to the whole budget is no sub-limit: no counter, no extra round trip per call.
    this.outgoingPerVault =
      settings.outgoingCallsPerMinutePerUser < settings.outgoingCallsPerMinute
        ? reconciledLimiter(
            dataSource,
            'outgoing-vault',
            settings.outgoingCallsPerMinutePerUser,
            OUTGOING_WINDOW_SECONDS,
          )
        : undefined;
  }

  /** Sends the counts not sent yet. */
  async onApplicationShutdown(): Promise<void> {
    await sharedReconciler(this.dataSource).close();
  }

  /**
   * One slot for a request to `domain` by a site of this vault, or OUTGOING_RATE_LIMITED. The vault's
   * share first, then the domain's: a vault past its share is refused without spending the domain's
   * budget that other users need.
   */
  async take(site: Pick<SiteEntity, 'userId' | 'workspaceId'>, domain: string): Promise<void> {
    try {
      await this.outgoingPerVault?.consume(`${vaultKey(site)}|${domain}`);
      await this.outgoing.consume(domain);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        this.metrics.outgoingLimited.inc({ domain: this.metrics.domainLabel(domain) });
        throw new AppError(
          'OUTGOING_RATE_LIMITED',
          `Too many outgoing tool calls to ${domain}; retry after ${OUTGOING_WINDOW_SECONDS} seconds`,
          undefined,
          OUTGOING_WINDOW_SECONDS,
        );
      }
      throw rejection;
    }
  }
}
