import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TermsRequired } from '../auth/decorators.js';
import { VaultService } from '../vault/vault.service.js';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
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
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's vault" })
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
    summary: 'Start an OAuth 2.0 + PKCE connection; scopes are the least the named tools need',
  })
  async oauthStart(@CurrentScope() scope: Scope, @Param('id') id: string, @Body() body: OAuthStartDto) {
    requireRole(scope, 'admin', 'Connecting a site');
    const site = await this.vault.findInScope(scope, id);
    return this.oauth.start(scope.user.id, site, body.tools);
  }
}
