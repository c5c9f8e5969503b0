import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/decorators.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { type CallbackResult, OAuthService } from './oauth.service.js';

@ApiTags('vault')
@Controller('oauth')
export class OAuthController {
  constructor(
    private readonly oauth: OAuthService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** The browser arrives here from the site; the single-use state says whose connection it is. */
  @Public()
  @Get('callback')
  @ApiOperation({ summary: 'OAuth redirect target: exchanges the code (with the PKCE verifier) and stores the tokens' })
  async callback(
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CallbackResult | void> {
    const result = await this.oauth.callback(query, req.originalUrl);
    if (this.settings.oauthSuccessRedirect !== undefined) {
      const target = new URL(this.settings.oauthSuccessRedirect);
      target.searchParams.set('siteId', result.siteId);
      res.redirect(302, target.toString());
      return;
    }
    return result;
  }
}
