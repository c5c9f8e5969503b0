import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SITE_SCOPES, type SiteScope } from '../../sites/scopes.js';
import type { CallbackResult, OAuthCompletion } from '../oauth.service.js';

/** Where to send the user's browser to approve the connection. */
export class OAuthStartResponseDto {
  @ApiProperty({ description: "The site's authorization URL, with state and PKCE challenge" })
  authorizationUrl: string;

  @ApiProperty({ enum: SITE_SCOPES, isArray: true, description: 'The least scopes the chosen tools need' })
  scopes: SiteScope[];
}

export class OAuthCompleteResponseDto implements CallbackResult {
  @ApiProperty({ format: 'uuid' })
  siteId: string;

  @ApiProperty({ enum: SITE_SCOPES, isArray: true, description: 'The scopes the site granted' })
  scopes: SiteScope[];

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
