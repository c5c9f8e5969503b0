import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { McpOAuthClientEntity } from './mcp-oauth-client.entity.js';
import { McpOAuthClients } from './mcp-oauth-clients.js';
import { McpOAuthClientsRepository } from './mcp-oauth-clients.repository.js';
import { OAuthConfigs } from './oauth-config.js';
import { TokenRefreshService } from './token-refresh.service.js';
import { TokenRevocation } from './token-revocation.js';

/**
 * Our side as an OAuth client of a site: its client configuration (discovery through the site HTTP
 * client; for MCP servers the client registered at their authorization server), the token refresh
 * over the vault's credentials, and the revocation of a removed credential's tokens. Apart from
 * OAuthModule (the authorization flow and its routes) because tool calls need the refresh in the
 * worker, where no route belongs.
 */
@Module({
  imports: [TypeOrmModule.forFeature([McpOAuthClientEntity]), SitesModule, VaultModule],
  providers: [OAuthConfigs, TokenRefreshService, McpOAuthClients, McpOAuthClientsRepository, TokenRevocation],
  exports: [OAuthConfigs, TokenRefreshService, McpOAuthClients],
})
export class OAuthClientModule {}
