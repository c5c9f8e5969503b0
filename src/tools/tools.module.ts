import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { ToolCaller } from './tool-caller.js';

/** Calling a site's tool with the vault's credential, under the outgoing rate limits. */
@Module({
  imports: [SitesModule, VaultModule],
  providers: [ToolCaller],
  exports: [ToolCaller],
})
export class ToolsModule {}
