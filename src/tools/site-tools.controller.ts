import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TermsRequired } from '../auth/decorators.js';
import { VaultService } from '../vault/vault.service.js';
import { CurrentScope, requireRole, type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import { ToolCallDto } from './dto/tool-call.dto.js';
import { ToolCaller, type ToolCallResult } from './tool-caller.js';

/**
 * Calling a vault site's tool by hand: a /vault/sites route that lives here because it uses this
 * folder's caller (the vault cannot import tools, which build on it). The class decorators and the
 * operationId are those of VaultController, where the route used to be, so the API document and
 * the guards see the same route.
 */
@ApiTags('vault')
@ApiBearerAuth()
@ApiHeader({ name: WORKSPACE_HEADER, required: false, description: "Act on a Team workspace's vault" })
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
  async call(
    @CurrentScope() scope: Scope,
    @Param('id') id: string,
    @Param('tool') tool: string,
    @Body() body: ToolCallDto,
  ): Promise<Omit<ToolCallResult, 'refreshed'>> {
    requireRole(scope, 'member', 'Calling a tool');
    const { site, credential } = await this.vault.findForCall(scope, id);
    const { result, durationMs } = await this.tools.call({ site, credential, tool, input: body.input });
    return { result, durationMs };
  }
}
