import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SitesModule } from '../sites/sites.module.js';
import { CredentialEntity } from './credential.entity.js';
import { CredentialRemovalHooks } from './credential-removal-hooks.js';
import { CredentialLeasesRepository } from './credential-leases.repository.js';
import { CredentialLeasesService } from './credential-leases.service.js';
import { CredentialsRepository } from './credentials.repository.js';
import { CredentialsService } from './credentials.service.js';
import { McpSites } from './mcp-sites.service.js';
import { SiteEntity } from './site.entity.js';
import { VaultCipher } from './vault-cipher.js';
import { VaultRepository } from './vault.repository.js';
import { VaultController } from './vault.controller.js';
import { VaultService } from './vault.service.js';

/**
 * The vault: registered sites and their sealed credentials (tables `sites` and `site_credentials`),
 * the cipher and the /vault/sites routes. Connecting a site by OAuth and calling a tool by hand are
 * /vault/sites routes too, registered by OAuthModule and ToolsModule, which build on the vault. The
 * worker imports it (through tools) for its services; there VaultController is constructed but
 * never routed (no HTTP adapter).
 */
@Module({
  imports: [TypeOrmModule.forFeature([SiteEntity, CredentialEntity]), SitesModule],
  controllers: [VaultController],
  providers: [
    VaultCipher,
    CredentialsService,
    CredentialsRepository,
    CredentialLeasesService,
    CredentialLeasesRepository,
    VaultService,
    VaultRepository,
    CredentialRemovalHooks,
    McpSites,
  ],
  exports: [VaultCipher, CredentialsService, CredentialLeasesService, VaultService, McpSites, CredentialRemovalHooks],
})
export class VaultModule {}
