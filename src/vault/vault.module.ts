import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SitesModule } from '../sites/sites.module.js';
import { CredentialEntity } from './credential.entity.js';
import { CredentialsRepository } from './credentials.repository.js';
import { CredentialsService } from './credentials.service.js';
import { SiteEntity } from './site.entity.js';
import { VaultCipher } from './vault-cipher.js';
import { VaultRepository } from './vault.repository.js';
import { VaultService } from './vault.service.js';

/**
 * The vault: registered sites and their sealed credentials (tables `sites` and `site_credentials`) and
 * the cipher. No routes: the worker uses it through tools, and its routes (VaultHttpModule) sit above
 * the OAuth and tools modules that build on it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([SiteEntity, CredentialEntity]), SitesModule],
  providers: [VaultCipher, CredentialsService, CredentialsRepository, VaultService, VaultRepository],
  exports: [VaultCipher, CredentialsService, VaultService],
})
export class VaultModule {}
