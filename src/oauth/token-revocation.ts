import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import * as oidc from 'openid-client';
import type { CredentialEntity } from '../vault/credential.entity.js';
import { CredentialRemovalHooks } from '../vault/credential-removal-hooks.js';
import { CredentialsService } from '../vault/credentials.service.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { OAuthConfigs } from './oauth-config.js';

/** How long one revocation request may take (it runs in the background of a removal). */
const REVOCATION_TIMEOUT_SECONDS = 10;

/**
 * RFC 7009: when a credential leaves the vault (DELETE …/token, or its site's deletion), its tokens
 * are revoked at the authorization server that issued them, when it has a revocation endpoint (an
 * MCP server's `revocation_endpoint`, an agentsite manifest's `auth.revocation_url`): the refresh
 * token first (which ends the grant at most servers), then the access token. Best effort: a failure
 * is logged and nothing else; the removal never waits for it.
 */
@Injectable()
export class TokenRevocation implements OnModuleInit {
  private readonly logger = new Logger('OAuth');

  constructor(
    private readonly configs: OAuthConfigs,
    private readonly credentials: CredentialsService,
    private readonly hooks: CredentialRemovalHooks,
  ) {}

  onModuleInit(): void {
    this.hooks.register((site, credential) => this.revoke(site, credential));
  }

  async revoke(site: SiteEntity, credential: CredentialEntity): Promise<void> {
    if (credential.kind !== 'oauth2') {
      return;
    }
    const oauth = await this.configs.forSite(site);
    if (oauth === null || oauth.revocationEndpoint === null) {
      return;
    }
    const secret = this.credentials.open(credential);
    if (secret.kind !== 'oauth2') {
      return;
    }
    oauth.config.timeout = REVOCATION_TIMEOUT_SECONDS;
    const tokens: Array<[token: string | null, hint: string]> = [
      [secret.refreshToken, 'refresh_token'],
      [secret.accessToken, 'access_token'],
    ];
    for (const [token, hint] of tokens) {
      if (token === null) {
        continue;
      }
      try {
        await oidc.tokenRevocation(oauth.config, token, { token_type_hint: hint });
        this.logger.log(`credential ${credential.id} of site ${site.id}: ${hint} revoked`);
      } catch (err) {
        // The error's text never carries the token (openid-client's errors name the endpoint and status).
        this.logger.warn(
          `credential ${credential.id} of site ${site.id}: revoking its ${hint} failed: ${(err as Error).message}`,
        );
      }
    }
  }
}
