import { Module } from '@nestjs/common';
import { OAuthModule } from '../oauth/oauth.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { VaultController } from './vault.controller.js';
import { VaultModule } from './vault.module.js';

/**
 * The /vault/sites routes. Apart from VaultModule because they also start OAuth flows and call tools
 * for a site, and the OAuth and tools modules import the vault: one module would be a cycle.
 */
@Module({
  imports: [VaultModule, OAuthModule, ToolsModule],
  controllers: [VaultController],
})
export class VaultHttpModule {}
