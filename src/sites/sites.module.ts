import { Module } from '@nestjs/common';
import { ManifestFetcher } from './manifest-fetcher.js';
import { McpClient } from './mcp-client.js';
import { SiteHttpClient } from './site-http.js';

/**
 * Talking to external sites: the guarded HTTP client, the manifest fetch and the MCP client. No
 * table of its own (`sites` is the vault's).
 */
@Module({
  providers: [SiteHttpClient, ManifestFetcher, McpClient],
  exports: [SiteHttpClient, ManifestFetcher, McpClient],
})
export class SitesModule {}
