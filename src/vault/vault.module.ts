import { Module } from '@nestjs/common';
import { OAuthController } from '../oauth/oauth.controller.js';
import { SitesCoreModule } from '../sites/sites-core.module.js';
import { VaultController } from './vault.controller.js';

@Module({
  imports: [SitesCoreModule],
  controllers: [VaultController, OAuthController],
})
export class VaultModule {}
