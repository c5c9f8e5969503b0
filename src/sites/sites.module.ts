import { Module } from '@nestjs/common';
import { ManifestFetcher } from './manifest-fetcher.js';
import { SiteHttpClient } from './site-http.js';

/** Talking to external sites: the guarded HTTP client and the manifest fetch. No table of its own (`sites` is the vault's). */
@Module({
  providers: [SiteHttpClient, ManifestFetcher],
  exports: [SiteHttpClient, ManifestFetcher],
})
export class SitesModule {}
