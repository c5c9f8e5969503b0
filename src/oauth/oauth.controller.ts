import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { type ApiReply, type ApiRequest, preferredType } from '../common/http.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, Public, TermsRequired } from '../auth/decorators.js';
import { ApiErrors } from '../common/api-errors.js';
import { PUBLIC_ERRORS, SIGNED_IN_ERRORS } from '../common/api-schemas.js';
import { AppError } from '../common/app-error.js';
import { flattenValidationErrors } from '../common/validation.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { ClientMetadataDocumentDto, OAuthCallbackJsonDto, OAuthCompleteResponseDto } from './dto/oauth-response.dto.js';
import { OAuthCompleteDto } from './dto/oauth.dto.js';
import { McpOAuthClients } from './mcp-oauth-clients.js';
import { oauthCompleteTarget } from './oauth-complete-target.js';
import { type OAuthCompletion, OAuthService } from './oauth.service.js';

export const COMPLETE_ROUTE = 'POST /api/oauth/complete';

/** The callback's parameters that the completion step needs (the others, like `scope`, are the site's business). */
const HANDED_ON = ['code', 'state', 'iss', 'error'] as const;

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

@ApiTags('vault')
@Controller('oauth')
export class OAuthController {
  /** The completion page (OAUTH_COMPLETE_URL, by default the console's), or null: show the values here. */
  private readonly completeUrl: string | null;

  constructor(
    private readonly oauth: OAuthService,
    private readonly mcpClients: McpOAuthClients,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.completeUrl = oauthCompleteTarget(settings);
  }

  /**
   * The browser arrives here from the site. Nothing is redeemed: whoever's browser this is, the
   * grant goes only into the vault of the user who started the flow, once they complete it with
   * their own token. The values travel on to the client that started it.
   */
  @Public()
  @Get('callback')
  @ApiOperation({
    summary:
      'OAuth redirect target: redeems nothing; hands code, state and iss to the completion step ' +
      "(302 to OAUTH_COMPLETE_URL, by default the console's completion page; with none, or without a " +
      'console: a small page, or JSON for Accept: application/json)',
  })
  @ApiExtraModels(OAuthCallbackJsonDto)
  @ApiFoundResponse({
    description:
      "To OAUTH_COMPLETE_URL (by default the console's /oauth/complete), with code, state, iss and error in its query",
    headers: { Location: { description: 'The completion page', schema: { type: 'string' } } },
  })
  @ApiOkResponse({
    description:
      'Without a completion page (OAUTH_COMPLETE_URL=none, or no console): the values to complete with, as JSON ' +
      '(Accept: application/json) or a page',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(OAuthCallbackJsonDto) } },
      'text/html': { schema: { type: 'string' } },
    },
  })
  @ApiErrors(...PUBLIC_ERRORS)
  callback(@Query() query: Record<string, unknown>, @Req() req: ApiRequest, @Res() res: ApiReply): void {
    const handoff = callbackHandoff(query);
    // The code is in these URLs: no caching, and no Referer carrying it anywhere.
    void res.header('cache-control', 'no-store');
    void res.header('referrer-policy', 'no-referrer');
    if (this.completeUrl !== null) {
      const target = new URL(this.completeUrl);
      for (const name of HANDED_ON) {
        const value = handoff[name];
        if (value !== undefined) {
          target.searchParams.set(name, value);
        }
      }
      void res.redirect(target.toString(), 302);
      return;
    }
    if (preferredType(req, ['text/html', 'application/json']) === 'application/json') {
      const answer: OAuthCallbackJsonDto = { complete: COMPLETE_ROUTE, body: handoff };
      void res.code(200).send(answer);
      return;
    }
    void res
      .code(200)
      .header('content-security-policy', "default-src 'none'")
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><meta charset="utf-8"><title>Complete the connection</title>
<h1>${handoff.error === undefined ? 'The site approved the connection' : 'The site did not approve the connection'}</h1>
<p>Nothing is stored yet: complete with ${COMPLETE_ROUTE} and your own API token, sending this body:</p>
<pre>${escapeHtml(JSON.stringify(handoff, null, 2))}</pre>`,
      );
  }

  /**
   * The Client ID Metadata Document: an MCP server's authorization server that supports these reads
   * the client's metadata from the URL given as client_id (used only when PUBLIC_BASE_URL is https).
   */
  @Public()
  @Get('client-metadata')
  @ApiOperation({
    summary:
      "The service's OAuth Client ID Metadata Document: its URL is the client_id the service presents to " +
      'MCP authorization servers that support such documents',
  })
  @ApiOkResponse({ type: ClientMetadataDocumentDto })
  @ApiErrors(...PUBLIC_ERRORS)
  clientMetadata(@Res({ passthrough: true }) res: ApiReply): ClientMetadataDocumentDto {
    void res.header('cache-control', 'public, max-age=3600');
    return this.mcpClients.metadataDocument() as unknown as ClientMetadataDocumentDto;
  }

  // Completing a connection stores a credential, like the vault's routes, so it is gated the same way.
  @TermsRequired()
  @Post('complete')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOperation({
    summary:
      'Redeem the code of a callback: only the user who started the connection can (PERMISSION_DENIED ' +
      'for anyone else; the state is spent either way); stores the tokens',
  })
  @ApiOkResponse({ type: OAuthCompleteResponseDto })
  @ApiErrors(...SIGNED_IN_ERRORS, 'TERMS_NOT_ACCEPTED', 'PERMISSION_DENIED', 'TOOL_EXECUTION_ERROR')
  complete(@CurrentUser() user: AuthUser, @Body() body: OAuthCompleteDto): Promise<OAuthCompleteResponseDto> {
    return this.oauth.complete(user.user.id, body);
  }
}

/** The callback's query, checked by the rules of the completion body (VALIDATION_ERROR naming the field). */
export function callbackHandoff(query: Record<string, unknown>): OAuthCompletion {
  const picked: Record<string, unknown> = {};
  for (const name of HANDED_ON) {
    if (query[name] !== undefined) {
      picked[name] = query[name];
    }
  }
  const dto = plainToInstance(OAuthCompleteDto, picked);
  const errors = validateSync(dto, { forbidUnknownValues: true });
  if (errors.length > 0) {
    throw AppError.validation(flattenValidationErrors(errors));
  }
  return picked as unknown as OAuthCompletion;
}
