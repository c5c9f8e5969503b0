import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { OAuthConfigs } from './oauth-config.js';
import { TokenRefreshService } from './token-refresh.service.js';

/**
 * Our side as an OAuth client of a site: its client configuration (discovery through the site HTTP
 * client) and the token refresh over the vault's credentials. Apart from OAuthModule (the
 * authorization flow and its routes) because tool calls need the refresh in the worker, where no
 * route belongs.
 */
@Module({
  imports: [SitesModule, VaultModule],
  providers: [OAuthConfigs, TokenRefreshService],
  exports: [OAuthConfigs, TokenRefreshService],
})
export class OAuthClientModule {}
