import { Module } from '@nestjs/common';
import { OAuthClientModule } from '../oauth/oauth-client.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { ToolCaller } from './tool-caller.js';

/** Calling a site's tool with the vault's credential (refreshed when due), under the outgoing rate limits. */
@Module({
  imports: [SitesModule, VaultModule, OAuthClientModule],
  providers: [ToolCaller],
  exports: [ToolCaller],
})
export class ToolsModule {}
