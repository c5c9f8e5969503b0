import { Injectable, Logger } from '@nestjs/common';
import type { CredentialEntity } from './credential.entity.js';
import type { SiteEntity } from './site.entity.js';

type RemovalHook = (site: SiteEntity, credential: CredentialEntity) => Promise<void>;

/**
 * What follows the removal of a credential (DELETE …/token, or the site's deletion), registered by
 * the features that build on the vault (OAuthClientModule revokes the tokens at the authorization
 * server, RFC 7009). The vault cannot import them; the hooks keep the routes here without a cycle.
 */
@Injectable()
export class CredentialRemovalHooks {
  private readonly logger = new Logger('Credentials');
  private readonly hooks: RemovalHook[] = [];

  register(hook: RemovalHook): void {
    this.hooks.push(hook);
  }

  /**
   * Runs every hook in the background, after the removal: the removal never waits for them and a
   * failure is logged, never answered (the credential is gone from the vault either way).
   */
  removed(site: SiteEntity, credential: CredentialEntity): void {
    for (const hook of this.hooks) {
      hook(site, credential).catch((err: unknown) =>
        this.logger.warn(`after removing credential ${credential.id}: ${(err as Error).message}`),
      );
    }
  }
}
