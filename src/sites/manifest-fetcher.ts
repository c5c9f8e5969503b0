import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { type Manifest, validateManifest } from './manifest.js';
import { publicNetworkMessage, SiteHttpClient, SiteNetworkError } from './site-http.js';

export const MANIFEST_PATH = '/.well-known/agentsite.json';
const MANIFEST_TIMEOUT_MS = 10_000;

/** `https://Site.example/app/?q#x` → `https://site.example/app` (what the vault keeps). */
export function normaliseSiteUrl(url: URL): string {
  const copy = new URL(url.toString());
  copy.search = '';
  copy.hash = '';
  return copy.toString().replace(/\/+$/, '');
}

@Injectable()
export class ManifestFetcher {
  private readonly logger = new Logger('Sites');

  constructor(private readonly http: SiteHttpClient) {}

  /** Fetches and validates `{site}/.well-known/agentsite.json`: MANIFEST_NOT_FOUND or MANIFEST_INVALID. */
  async fetch(siteUrl: string): Promise<Manifest> {
    const manifestUrl = `${siteUrl}${MANIFEST_PATH}`;
    let response;
    try {
      response = await this.http.request({
        method: 'GET',
        url: manifestUrl,
        headers: { accept: 'application/json' },
        timeoutMs: MANIFEST_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof SiteNetworkError) {
        // The socket's own text (resolved addresses, ports) would help map a private network: log only.
        this.logger.warn(`manifest fetch of ${manifestUrl} failed: ${err.message}`);
        throw new AppError('MANIFEST_NOT_FOUND', `Could not fetch ${manifestUrl}: ${publicNetworkMessage(err)}`);
      }
      throw err;
    }
    if (response.status !== 200) {
      throw new AppError('MANIFEST_NOT_FOUND', `${manifestUrl} answered HTTP ${response.status}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new AppError('MANIFEST_NOT_FOUND', `${manifestUrl} did not answer JSON`);
    }
    return validateManifest(json, siteUrl);
  }
}
