import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TermsRequired } from '../auth/decorators.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { VaultService } from '../vault/vault.service.js';
import { CurrentScope, requireRole, type Scope } from '../workspaces/scope.js';
import { OAuthStartResponseDto } from './dto/oauth-response.dto.js';
import { OAuthStartDto } from './dto/oauth-start.dto.js';
import { OAuthService } from './oauth.service.js';

/**
 * Connecting a vault site by OAuth: a /vault/sites route that lives here because it starts this
 * folder's flow (the vault cannot import oauth, which builds on it). The class decorators and the
 * operationId are those of VaultController, where the route used to be, so the API document and
 * the guards see the same route.
 */
@ApiTags('vault')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('vault/sites')
export class SiteOAuthController {
  constructor(
    private readonly vault: VaultService,
    private readonly oauth: OAuthService,
  ) {}

  @Post(':id/oauth/start')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'VaultController_oauthStart',
    summary:
      'Start an OAuth 2.0 + PKCE connection; scopes are the least the named tools need (an MCP server: its ' +
      "challenge's scope or those it supports, plus the scope a step-up asked for; `tools` does not narrow them)",
  })
  @ApiOkResponse({ type: OAuthStartResponseDto })
  @ApiErrors(...TERMS_GATED_ERRORS, 'NOT_FOUND', 'PERMISSION_DENIED', 'MANIFEST_INVALID', 'TOOL_EXECUTION_ERROR')
  async oauthStart(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Body() body: OAuthStartDto,
  ): Promise<OAuthStartResponseDto> {
    requireRole(scope, 'admin', 'Connecting a site');
    const site = await this.vault.findInScope(scope, id);
    return this.oauth.start(scope.user.id, site, body.tools);
  }
}
