import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SITE_SCOPES } from '../../sites/scopes.js';
import type { CallbackResult, OAuthCompletion } from '../oauth.service.js';

/** Where to send the user's browser to approve the connection. */
export class OAuthStartResponseDto {
  @ApiProperty({ description: "The site's authorization URL, with state and PKCE challenge" })
  authorizationUrl: string;

  @ApiProperty({
    type: [String],
    description:
      `The scopes asked for: for an agentsite site the least the chosen tools need (${SITE_SCOPES.join(', ')}); ` +
      "for an MCP server its own scope names (the challenge's, else the least of those it supports the chosen " +
      "tools need where its scope names say which (else all), plus a step-up's)",
  })
  scopes: string[];
}

export class OAuthCompleteResponseDto implements CallbackResult {
  @ApiProperty({ format: 'uuid' })
  siteId: string;

  @ApiProperty({ type: [String], description: 'The scopes the site granted (an MCP server: its own scope names)' })
  scopes: string[];

  @ApiProperty({ type: Boolean, enum: [true] })
  connected: true;
}

/** The callback's parameters, as the body of POST /api/oauth/complete. */
export class OAuthHandoffDto implements OAuthCompletion {
  @ApiPropertyOptional()
  code?: string;

  @ApiProperty()
  state: string;

  @ApiPropertyOptional()
  iss?: string;

  @ApiPropertyOptional()
  error?: string;
}

/** The callback's JSON answer (Accept: application/json, no completion page to redirect to). */
export class OAuthCallbackJsonDto {
  @ApiProperty({ example: 'POST /api/oauth/complete', description: 'The route that completes the connection' })
  complete: string;

  @ApiProperty({ type: OAuthHandoffDto, description: 'The body to send it' })
  body: OAuthHandoffDto;
}

/** The service's OAuth Client ID Metadata Document: its URL is the client_id it presents to MCP servers that support it. */
export class ClientMetadataDocumentDto {
  @ApiProperty({
    description:
      "This document's own URL: MCP_CLIENT_METADATA_URL, by default PUBLIC_BASE_URL/api/oauth/client-metadata",
  })
  client_id: string;

  @ApiProperty({ example: 'agentsite' })
  client_name: string;

  @ApiProperty({ description: 'PUBLIC_BASE_URL' })
  client_uri: string;

  @ApiProperty({ type: [String], description: 'PUBLIC_BASE_URL/api/oauth/callback' })
  redirect_uris: string[];

  @ApiProperty({ type: [String], example: ['authorization_code', 'refresh_token'] })
  grant_types: string[];

  @ApiProperty({ type: [String], example: ['code'] })
  response_types: string[];

  @ApiProperty({ enum: ['none'], description: 'A public client: PKCE S256, no secret' })
  token_endpoint_auth_method: 'none';

  @ApiProperty({ enum: ['web'] })
  application_type: 'web';
}
