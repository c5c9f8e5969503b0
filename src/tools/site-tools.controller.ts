import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TermsRequired } from '../auth/decorators.js';
import { ApiErrors, ApiWorkspaceHeader } from '../common/api-errors.js';
import { TERMS_GATED_ERRORS } from '../common/api-schemas.js';
import { VaultService } from '../vault/vault.service.js';
import { CurrentScope, requireRole, type Scope } from '../workspaces/scope.js';
import { ToolCallResponseDto } from './dto/tool-call-response.dto.js';
import { ToolCallDto } from './dto/tool-call.dto.js';
import { ToolCaller } from './tool-caller.js';

/**
 * Calling a vault site's tool by hand: a /vault/sites route that lives here because it uses this
 * folder's caller (the vault cannot import tools, which build on it). The class decorators and the
 * operationId are those of VaultController, where the route used to be, so the API document and
 * the guards see the same route.
 */
@ApiTags('vault')
@ApiBearerAuth()
@ApiWorkspaceHeader()
@TermsRequired()
@Controller('vault/sites')
export class SiteToolsController {
  constructor(
    private readonly vault: VaultService,
    private readonly tools: ToolCaller,
  ) {}

  @Post(':id/tools/:tool/call')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ operationId: 'VaultController_call', summary: 'Call a tool of the site with the stored credential' })
  @ApiOkResponse({ type: ToolCallResponseDto })
  @ApiErrors(
    ...TERMS_GATED_ERRORS,
    'NOT_FOUND',
    'PERMISSION_DENIED',
    'MANIFEST_INVALID',
    'TOOL_EXECUTION_ERROR',
    'OUTGOING_RATE_LIMITED',
  )
  async call(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Param('tool') tool: string,
    @Body() body: ToolCallDto,
  ): Promise<ToolCallResponseDto> {
    requireRole(scope, 'member', 'Calling a tool');
    const { site, credential } = await this.vault.findForCall(scope, id);
    const { result, durationMs } = await this.tools.call({ site, credential, tool, input: body.input });
    return { result, durationMs };
  }
}
