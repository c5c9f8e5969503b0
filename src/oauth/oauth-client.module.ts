import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module.js';
import { OAuthConfigs } from './oauth-config.js';

/**
 * A site's OAuth client configuration (discovery through the site HTTP client), apart from the
 * OAuth flows: the vault's token refresh needs it, and the flows (OAuthModule) need the vault, so one
 * module for both would import the vault and be imported by it.
 */
@Module({
  imports: [SitesModule],
  providers: [OAuthConfigs],
  exports: [OAuthConfigs],
})
export class OAuthClientModule {}
