import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RateLimiterPostgres } from 'rate-limiter-flexible';
import { type DataSource } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { consumeOrThrow, postgresLimiter } from '../common/rate-limit.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { OAuthConfigs } from '../oauth/oauth-config.js';
import {
  publicNetworkMessage,
  SiteHttpClient,
  SiteNetworkError,
  type SiteRequest,
  type SiteResponse,
} from '../sites/site-http.js';
import { OutgoingLimits, outgoingKey } from '../tools/outgoing-limits.js';
import { VaultService } from '../vault/vault.service.js';
import { requireRole, type Scope } from '../workspaces/scope.js';
import type { ConformanceReport } from './conformance-report.js';
import { type ConformanceCheckDto, MAX_API_BURST } from './dto/conformance.dto.js';
import { type CheckerHttp, CheckStopped } from './site-answers.js';
import { checkSite } from './site-checker.js';

/** Each check makes dozens of requests to a site of the user's choosing: a few per user and window. */
export const CHECKS_PER_WINDOW = 10;
export const CHECK_WINDOW_SECONDS = 600;
/** Tools one check through the API calls (the manifest's first ones); agentsite-check calls them all. */
export const MAX_API_TOOLS = 10;
/**
 * Requests one check through the API makes at most: the manifest, the OAuth rules without sign-in (a
 * handful), two calls per tool and the burst, with room to spare.
 */
export const MAX_API_CHECK_REQUESTS = 20 + 2 * MAX_API_TOOLS + MAX_API_BURST;

const NO_ACCOUNT_REASON =
  "the API does not sign in at a site's consent page (that needs the test account's password): " +
  'run agentsite-check with --user and the password in AGENTSITE_CHECK_PASSWORD (or --password-stdin)';

/**
 * The conformance checks behind the API, for a site of the caller's vault: through the service's own
 * site client, so the SSRF guard, HTTPS-only rule and extra CAs apply exactly as to manifests and tool
 * calls; every request takes a slot of the outgoing budget as a tool call of that vault does; OAuth
 * as the service's own client (its client id and callback).
 */
@Injectable()
export class ConformanceService {
  private readonly perUser: RateLimiterPostgres;

  constructor(
    private readonly http: SiteHttpClient,
    private readonly oauth: OAuthConfigs,
    private readonly vault: VaultService,
    private readonly limits: OutgoingLimits,
    @InjectDataSource() dataSource: DataSource,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.perUser = postgresLimiter(dataSource, 'conformance-user', CHECKS_PER_WINDOW, CHECK_WINDOW_SECONDS);
  }

  async check(scope: Scope, request: ConformanceCheckDto): Promise<ConformanceReport> {
    requireRole(scope, 'member', 'Checking a site');
    await consumeOrThrow(
      this.perUser,
      scope.user.id,
      'RATE_LIMITED',
      `At most ${CHECKS_PER_WINDOW} conformance checks per ${CHECK_WINDOW_SECONDS / 60} minutes`,
    );
    const site = await this.vault.findByUrl(scope, request.url);
    return checkSite(new BudgetedHttp(this.http, (domain) => this.limits.take(site, domain)), {
      url: site.url,
      token: request.token,
      clientId: this.settings.oauthClientId,
      redirectUri: this.oauth.redirectUri,
      burst: request.burst ?? MAX_API_BURST,
      maxTools: MAX_API_TOOLS,
      noAccountReason: NO_ACCOUNT_REASON,
    });
  }
}

/**
 * The site client as one API check sees it: each request takes an outgoing slot of the site's vault
 * and domain first, at most MAX_API_CHECK_REQUESTS are sent, and a network failure says only its
 * public gist (never the socket's addresses and ports).
 */
class BudgetedHttp implements CheckerHttp {
  private sent = 0;

  constructor(
    private readonly http: SiteHttpClient,
    private readonly take: (domain: string) => Promise<void>,
  ) {}

  assertSiteUrl(raw: string, field?: string): URL {
    return this.http.assertSiteUrl(raw, field);
  }

  async request(request: SiteRequest): Promise<SiteResponse> {
    if (this.sent >= MAX_API_CHECK_REQUESTS) {
      throw new CheckStopped(
        `the check sent the ${MAX_API_CHECK_REQUESTS} requests one check through the API may send (agentsite-check has no such cap)`,
      );
    }
    const domain = outgoingKey(request.url);
    try {
      await this.take(domain);
    } catch (err) {
      // Nothing sent yet: the whole check waits (429 with Retry-After); later, the rest is skipped.
      if (this.sent === 0 || !(err instanceof AppError) || err.code !== 'OUTGOING_RATE_LIMITED') {
        throw err;
      }
      throw new CheckStopped(
        `the outgoing limit of ${domain} for this vault is spent for this minute (OUTGOING_CALLS_PER_MINUTE, ` +
          `OUTGOING_CALLS_PER_MINUTE_PER_USER); check again later, or run agentsite-check`,
      );
    }
    this.sent += 1;
    try {
      return await this.http.request(request);
    } catch (err) {
      if (err instanceof SiteNetworkError) {
        throw new SiteNetworkError(publicNetworkMessage(err), err.kind);
      }
      throw err;
    }
  }
}
