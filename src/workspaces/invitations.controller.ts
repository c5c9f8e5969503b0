import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { InvitationListDto, WorkspaceResponseDto } from './dto/workspace-responses.dto.js';
import { WorkspacesService } from './workspaces.service.js';

/** The signed-in user's side of workspace invitations: those addressed to their account's email. */
@ApiTags('workspaces')
@ApiBearerAuth()
@TermsRequired()
// VALIDATION_ERROR: a path that cannot be decoded, or a malformed JSON body.
@ApiErrors(...AUTH_ERRORS, 'TERMS_NOT_ACCEPTED', 'VALIDATION_ERROR')
@Controller('invitations')
export class InvitationsController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Get()
  @ApiOperation({ summary: 'Your pending invitations to workspaces' })
  @ApiOkResponse({ type: InvitationListDto })
  list(@CurrentUser() auth: AuthUser): Promise<InvitationListDto> {
    return this.workspaces.myInvitations(auth.user);
  }

  @Post(':id/accept')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Accept an invitation: you become a member with its role' })
  @ApiOkResponse({ type: WorkspaceResponseDto, description: 'The workspace, with your role in it' })
  @ApiErrors('NOT_FOUND', 'FEATURE_LIMIT_REACHED', 'SUBSCRIPTION_PAST_DUE')
  accept(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<WorkspaceResponseDto> {
    return this.workspaces.acceptInvitation(auth.user, id);
  }

  @Post(':id/decline')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Decline an invitation (it is deleted)' })
  @ApiNoContentResponse({ description: 'The invitation is declined' })
  @ApiErrors('NOT_FOUND')
  decline(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<void> {
    return this.workspaces.declineInvitation(auth.user, id);
  }
}
