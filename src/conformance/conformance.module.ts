import { Module } from '@nestjs/common';
import { OAuthClientModule } from '../oauth/oauth-client.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { ConformanceController } from './conformance.controller.js';
import { ConformanceService } from './conformance.service.js';

/**
 * Conformance checks for site authors: the published manifest schema and the check route. The rules
 * themselves (site-checker.ts and the files it uses) need no Nest: the agentsite-check CLI runs them.
 */
@Module({
  imports: [SitesModule, OAuthClientModule, VaultModule, ToolsModule],
  controllers: [ConformanceController],
  providers: [ConformanceService],
})
export class ConformanceModule {}
