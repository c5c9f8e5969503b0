import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { McpConsentService } from './consent.service.js';
import { McpConsentDecisionDto, McpConsentDto, McpConsentResultDto } from './dto/mcp-consent.dto.js';

const UID_PARAM = {
  name: 'uid',
  description: 'The consent’s id, from the consent page’s URL (/connect/{uid})',
  schema: { type: 'string' as const, pattern: '^[A-Za-z0-9_-]{1,64}$' },
};

/** The consent page of the authorization server for MCP clients (/connect/{uid} in the console). */
@ApiTags('mcp')
@ApiBearerAuth()
@TermsRequired()
@ApiErrors(...AUTH_ERRORS, 'TERMS_NOT_ACCEPTED', 'VALIDATION_ERROR')
@Controller('mcp-consent')
export class McpConsentController {
  constructor(private readonly consent: McpConsentService) {}

  @Get(':uid')
  @ApiOperation({
    summary: 'What an MCP client asks to connect: the app, the scope, the workspaces you may pick',
    description: 'SESSION_NOT_FOUND when the request expired (30 minutes), was answered already or never existed.',
  })
  @ApiParam(UID_PARAM)
  @ApiOkResponse({ type: McpConsentDto })
  @ApiErrors('SESSION_NOT_FOUND')
  describe(@CurrentUser() auth: AuthUser, @Param('uid') uid: string): Promise<McpConsentDto> {
    return this.consent.describe(auth.user.id, uid);
  }

  @Post(':uid')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Connect the MCP client (approve, in your personal scope or a workspace) or refuse it',
    description:
      'Answers where the browser goes next: the authorization server, which sends it back to the app with a ' +
      'code (approve) or access_denied. Any member of a workspace may pick it, viewers included (the app can ' +
      'then do only what a viewer may).',
  })
  @ApiParam(UID_PARAM)
  @ApiOkResponse({ type: McpConsentResultDto })
  @ApiErrors('SESSION_NOT_FOUND', 'WORKSPACE_NOT_FOUND')
  decide(
    @CurrentUser() auth: AuthUser,
    @Param('uid') uid: string,
    @Body() body: McpConsentDecisionDto,
  ): Promise<McpConsentResultDto> {
    return this.consent.decide(auth.user.id, uid, body);
  }
}
