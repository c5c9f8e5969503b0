import { Controller, Delete, Get, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { ConnectedAppsService } from './connected-apps.service.js';
import { ConnectedAppListDto } from './dto/connected-apps.dto.js';

/** The MCP clients the caller connected to agentsite (/mcp), in every workspace. */
@ApiTags('mcp')
@ApiBearerAuth()
@TermsRequired()
@ApiErrors(...AUTH_ERRORS, 'TERMS_NOT_ACCEPTED', 'VALIDATION_ERROR')
@Controller('connected-apps')
export class ConnectedAppsController {
  constructor(private readonly apps: ConnectedAppsService) {}

  @Get()
  @ApiOperation({ summary: 'The MCP clients you connected, newest first, with the workspace each acts in' })
  @ApiOkResponse({ type: ConnectedAppListDto })
  list(@CurrentUser() auth: AuthUser): Promise<ConnectedAppListDto> {
    return this.apps.list(auth.user.id);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Disconnect an MCP client: its access and refresh tokens stop working at once',
    description: 'NOT_FOUND for an app that is not yours.',
  })
  @ApiNoContentResponse({ description: 'Disconnected' })
  @ApiErrors('NOT_FOUND')
  revoke(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<void> {
    return this.apps.revoke(auth.user.id, id);
  }
}
