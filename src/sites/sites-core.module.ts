import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { OAuthConfigs } from '../oauth/oauth-config.js';
import { OAuthService } from '../oauth/oauth.service.js';
import { ToolCaller } from '../tools/tool-caller.js';
import { CredentialsService } from '../vault/credentials.service.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import { VaultService } from '../vault/vault.service.js';
import { ManifestFetcher } from './manifest-fetcher.js';
import { SiteHttpClient } from './site-http.js';

/** Sites, the vault and tool calls, without HTTP routes: shared by the API and the worker. */
@Module({
  imports: [DatabaseModule],
  providers: [
    SiteHttpClient,
    ManifestFetcher,
    VaultCipher,
    OAuthConfigs,
    CredentialsService,
    OAuthService,
    VaultService,
    ToolCaller,
  ],
  exports: [
    SiteHttpClient,
    ManifestFetcher,
    VaultCipher,
    OAuthConfigs,
    CredentialsService,
    OAuthService,
    VaultService,
    ToolCaller,
  ],
})
export class SitesCoreModule {}
