import { Module } from '@nestjs/common';
import { OAuthClientModule } from '../oauth/oauth-client.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { SiteToolsController } from './site-tools.controller.js';
import { OutgoingLimits } from './outgoing-limits.js';
import { McpToolCaller } from './mcp-tool-caller.js';
import { ToolCaller } from './tool-caller.js';

/**
 * Calling a site's tool with the vault's credential (refreshed when due), under the outgoing rate
 * limits (OutgoingLimits, which the conformance check's requests also take), and the route that
 * calls one by hand. The worker imports it for ToolCaller; there
 * SiteToolsController is constructed but never routed.
 */
@Module({
  imports: [SitesModule, VaultModule, OAuthClientModule],
  controllers: [SiteToolsController],
  providers: [ToolCaller, McpToolCaller, OutgoingLimits],
  exports: [ToolCaller, OutgoingLimits],
})
export class ToolsModule {}
