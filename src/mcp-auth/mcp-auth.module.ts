import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_TOKEN_VERIFIER } from '../mcp-server/caller.js';
import { SitesModule } from '../sites/sites.module.js';
import { McpAuthorizationServer } from './authorization-server.js';
import { ConnectedAppsController } from './connected-apps.controller.js';
import { ConnectedAppsService } from './connected-apps.service.js';
import { McpConsentService } from './consent.service.js';
import { ConnectedAppEntity, McpAuthorizationStateEntity } from './mcp-auth.entities.js';
import { McpAuthRepository } from './mcp-auth.repository.js';
import { McpConsentController } from './mcp-consent.controller.js';

/**
 * The OAuth 2.1 authorization server for MCP clients (oidc-provider at /mcp-oauth, mounted by
 * app.factory.ts through mountMcpAuthorizationServer), its consent and connected-apps routes, and
 * MCP_TOKEN_VERIFIER for /mcp. Global, so src/mcp-server injects the verifier without importing it.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([McpAuthorizationStateEntity, ConnectedAppEntity]), SitesModule],
  controllers: [McpConsentController, ConnectedAppsController],
  providers: [
    McpAuthRepository,
    McpAuthorizationServer,
    McpConsentService,
    ConnectedAppsService,
    { provide: MCP_TOKEN_VERIFIER, useExisting: ConnectedAppsService },
  ],
  exports: [MCP_TOKEN_VERIFIER, McpAuthorizationServer],
})
export class McpAuthModule {}
