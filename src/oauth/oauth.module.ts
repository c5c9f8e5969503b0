import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { McpOAuthFlow } from './mcp-oauth-flow.js';
import { OAuthClientModule } from './oauth-client.module.js';
import { OAuthStateEntity } from './oauth-state.entity.js';
import { OAuthController } from './oauth.controller.js';
import { OAuthRepository } from './oauth.repository.js';
import { OAuthService } from './oauth.service.js';
import { SiteOAuthController } from './site-oauth.controller.js';

/**
 * The OAuth authorization-code flow: its pending states, its routes (starting it for a vault site,
 * the callback and the completion), the tokens it stores in the vault.
 */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthStateEntity]), SitesModule, OAuthClientModule, VaultModule],
  // SiteOAuthController first: in the API document its /vault/sites route follows the vault's own.
  controllers: [SiteOAuthController, OAuthController],
  providers: [OAuthService, OAuthRepository, McpOAuthFlow],
  exports: [OAuthService],
})
export class OAuthModule {}
