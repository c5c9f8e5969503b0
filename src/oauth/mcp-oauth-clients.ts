import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { type AuthorizationServerMetadata, registerClient } from '@modelcontextprotocol/client';
import { AppError } from '../common/app-error.js';
import type { McpTokenEndpointAuthMethod } from '../config/mcp-oauth-settings.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import type { McpAuthorization } from '../sites/mcp-state.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import type { McpOAuthClientEntity } from './mcp-oauth-client.entity.js';
import { McpOAuthClientsRepository } from './mcp-oauth-clients.repository.js';
import { siteFetchOf, type SiteFetch } from './site-fetch.js';
import { SiteHttpClient } from '../sites/site-http.js';

/** How the service presents itself to an MCP server's authorization server. */
export interface McpClientIdentity {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: McpTokenEndpointAuthMethod;
  /** Where the identity came from: MCP_OAUTH_CLIENTS, the metadata document, or a stored registration. */
  source: 'configured' | 'metadata_document' | 'registered';
  /** The `mcp_oauth_clients` row of a registered client. */
  rowId?: string;
}

const aadOf = (id: string) => `mcp_oauth_clients:${id}`;

/**
 * The client the service uses at an MCP server's authorization server, in this order: the one
 * MCP_OAUTH_CLIENTS gives for the issuer; else the service's Client ID Metadata Document, when the
 * server advertises support and its URL (MCP_CLIENT_METADATA_URL, by default under PUBLIC_BASE_URL) is
 * https (the document must be reachable by it);
 * else a client registered dynamically (RFC 7591) once per issuer and redirect URI, stored and reused
 * by every user, its secret sealed.
 */
@Injectable()
export class McpOAuthClients {
  private readonly logger = new Logger('OAuth');
  private readonly fetch: SiteFetch;

  constructor(
    private readonly rows: McpOAuthClientsRepository,
    private readonly cipher: VaultCipher,
    http: SiteHttpClient,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.fetch = siteFetchOf(http);
  }

  get redirectUri(): string {
    return `${this.settings.publicBaseUrl}/api/oauth/callback`;
  }

  /** The document's URL, its client_id: MCP_CLIENT_METADATA_URL, by default where the service serves it. */
  get metadataDocumentUrl(): string {
    return this.settings.mcpClientMetadataUrl;
  }

  /** Whether the metadata document may be the client_id at this server: supported there, and an https URL. */
  private usesMetadataDocument(auth: McpAuthorization): boolean {
    return auth.clientIdMetadataDocumentSupported && this.metadataDocumentUrl.startsWith('https://');
  }

  /** The Client ID Metadata Document the service publishes at its own URL. */
  metadataDocument(): Record<string, unknown> {
    return {
      client_id: this.metadataDocumentUrl,
      client_name: 'agentsite',
      client_uri: this.settings.publicBaseUrl,
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'web',
    };
  }

  /** The identity to use at this authorization server, registering one when there is none yet. */
  async identityFor(auth: McpAuthorization, siteName: string): Promise<McpClientIdentity> {
    return (await this.existingIdentity(auth)) ?? this.register(auth, siteName);
  }

  /** The identity a stored credential was issued to (for refresh and revocation): never registers. */
  async existingIdentity(auth: McpAuthorization): Promise<McpClientIdentity | null> {
    const configured = this.settings.mcpOAuthClients[auth.issuer.replace(/\/+$/, '')];
    if (configured !== undefined) {
      return { ...configured, source: 'configured' };
    }
    if (this.usesMetadataDocument(auth)) {
      return { clientId: this.metadataDocumentUrl, tokenEndpointAuthMethod: 'none', source: 'metadata_document' };
    }
    const stored = await this.rows.find(auth.issuer, this.redirectUri);
    return stored === null ? null : this.identityOf(stored);
  }

  /** Forgets a registration the server refused (invalid_client): the next start registers again. */
  async forget(identity: McpClientIdentity): Promise<void> {
    if (identity.source === 'registered' && identity.rowId !== undefined) {
      this.logger.warn(`registered client ${identity.rowId} refused by its authorization server: forgotten`);
      await this.rows.remove(identity.rowId);
    }
  }

  private identityOf(row: McpOAuthClientEntity): McpClientIdentity {
    const secret =
      row.keyId === null || row.iv === null || row.ciphertext === null || row.authTag === null
        ? undefined
        : this.cipher.open(
            { keyId: row.keyId, iv: row.iv, ciphertext: row.ciphertext, authTag: row.authTag },
            aadOf(row.id),
          );
    return {
      clientId: row.clientId,
      ...(secret === undefined ? {} : { clientSecret: secret }),
      tokenEndpointAuthMethod: row.tokenEndpointAuthMethod as McpTokenEndpointAuthMethod,
      source: 'registered',
      rowId: row.id,
    };
  }

  private async register(auth: McpAuthorization, siteName: string): Promise<McpClientIdentity> {
    if (auth.registrationEndpoint === null) {
      throw AppError.validation([
        {
          field: 'site',
          message:
            `${siteName}'s authorization server takes no client registration: ` +
            'an operator must register the service there and name the client in MCP_OAUTH_CLIENTS',
        },
      ]);
    }
    const metadata = {
      issuer: auth.issuer,
      authorization_endpoint: auth.authorizationEndpoint,
      token_endpoint: auth.tokenEndpoint,
      registration_endpoint: auth.registrationEndpoint,
      response_types_supported: ['code'],
    } as AuthorizationServerMetadata;
    const methods = auth.tokenEndpointAuthMethods;
    // A public client (PKCE only) unless the server takes no such client.
    const method: McpTokenEndpointAuthMethod =
      methods === null || methods.includes('none')
        ? 'none'
        : methods.includes('client_secret_basic')
          ? 'client_secret_basic'
          : 'client_secret_post';
    let registered;
    try {
      registered = await registerClient(auth.issuer, {
        metadata,
        clientMetadata: {
          client_name: 'agentsite',
          client_uri: this.settings.publicBaseUrl,
          redirect_uris: [this.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: method,
          application_type: 'web',
        } as Parameters<typeof registerClient>[1]['clientMetadata'],
        fetchFn: this.fetch,
      });
    } catch (err) {
      this.logger.warn(`client registration at ${auth.issuer} failed: ${(err as Error).message}`);
      throw new AppError('TOOL_EXECUTION_ERROR', `${siteName}'s authorization server refused to register the service`);
    }
    const id = randomUUID();
    const sealed =
      registered.client_secret === undefined ? null : this.cipher.seal(registered.client_secret, aadOf(id));
    const { client_secret: _secret, ...kept } = registered;
    const row = await this.rows.insertOrGet({
      id,
      issuer: auth.issuer,
      redirectUri: this.redirectUri,
      clientId: registered.client_id,
      keyId: sealed?.keyId ?? null,
      iv: sealed?.iv ?? null,
      ciphertext: sealed?.ciphertext ?? null,
      authTag: sealed?.authTag ?? null,
      tokenEndpointAuthMethod: registered.token_endpoint_auth_method ?? method,
      registration: kept as Record<string, unknown>,
    });
    this.logger.log(
      `registered at ${auth.issuer} as client ${row.clientId} (${row.id === id ? 'new' : 'raced, kept the first'})`,
    );
    return this.identityOf(row);
  }
}
