import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RateLimiterPostgres } from 'rate-limiter-flexible';
import { type DataSource } from 'typeorm';
import { consumeOrThrow, postgresLimiter } from '../common/rate-limit.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { OAuthConfigs } from '../oauth/oauth-config.js';
import { SiteHttpClient } from '../sites/site-http.js';
import type { ConformanceReport } from './conformance-report.js';
import { type ConformanceCheckDto, MAX_API_BURST } from './dto/conformance.dto.js';
import { checkSite } from './site-checker.js';

/** Each check makes dozens of requests to a site of the user's choosing: a few per user and window. */
export const CHECKS_PER_WINDOW = 10;
export const CHECK_WINDOW_SECONDS = 600;

const NO_ACCOUNT_REASON =
  "the API does not sign in at a site's consent page (that needs the test account's password): " +
  'run agentsite-check with --user and --password';

/**
 * The conformance checks behind the API: through the service's own site client, so the SSRF guard,
 * HTTPS-only rule and extra CAs apply exactly as to manifests and tool calls; OAuth as the service's
 * own client (its client id and callback).
 */
@Injectable()
export class ConformanceService {
  private readonly perUser: RateLimiterPostgres;

  constructor(
    private readonly http: SiteHttpClient,
    private readonly oauth: OAuthConfigs,
    @InjectDataSource() dataSource: DataSource,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.perUser = postgresLimiter(dataSource, 'conformance-user', CHECKS_PER_WINDOW, CHECK_WINDOW_SECONDS);
  }

  async check(userId: string, request: ConformanceCheckDto): Promise<ConformanceReport> {
    await consumeOrThrow(
      this.perUser,
      userId,
      'RATE_LIMITED',
      `At most ${CHECKS_PER_WINDOW} conformance checks per ${CHECK_WINDOW_SECONDS / 60} minutes`,
    );
    return checkSite(this.http, {
      url: request.url,
      token: request.token,
      clientId: this.settings.oauthClientId,
      redirectUri: this.oauth.redirectUri,
      burst: request.burst ?? MAX_API_BURST,
      noAccountReason: NO_ACCOUNT_REASON,
    });
  }
}
