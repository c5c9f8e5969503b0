import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { AddMemberDto, ChangeRoleDto, CreateWorkspaceDto, TransferOwnershipDto } from './dto/workspace.dto.js';
import {
  InvitationListDto,
  InvitationResponseDto,
  MemberListDto,
  MemberResponseDto,
  WorkspaceListDto,
  WorkspaceResponseDto,
} from './dto/workspace-responses.dto.js';
import { WorkspacesService } from './workspaces.service.js';

@ApiTags('workspaces')
@ApiBearerAuth()
@TermsRequired()
@ApiErrors(...AUTH_ERRORS, 'TERMS_NOT_ACCEPTED', 'VALIDATION_ERROR')
@Controller('workspaces')
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @ApiOperation({ summary: 'Create a Team workspace (TIER_REQUIRED below team); you are its owner' })
  @ApiCreatedResponse({ type: WorkspaceResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'TIER_REQUIRED', 'FEATURE_LIMIT_REACHED')
  create(@CurrentUser() auth: AuthUser, @Body() body: CreateWorkspaceDto): Promise<WorkspaceResponseDto> {
    return this.workspaces.create(auth.user, body.name);
  }

  @Get()
  @ApiOperation({ summary: 'Your workspaces, with your role in each' })
  @ApiOkResponse({ type: WorkspaceListDto })
  list(@CurrentUser() auth: AuthUser): Promise<WorkspaceListDto> {
    return this.workspaces.list(auth.user.id);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One workspace (WORKSPACE_NOT_FOUND for non-members)' })
  @ApiOkResponse({ type: WorkspaceResponseDto })
  @ApiErrors('WORKSPACE_NOT_FOUND')
  get(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<WorkspaceResponseDto> {
    return this.workspaces.get(auth.user.id, id);
  }

  @Post(':id/members')
  @ApiOperation({
    summary: 'Invite someone by email with a role (admins and the owner)',
    description:
      'Creates (or renews) a pending invitation: the person becomes a member only when they accept it ' +
      '(POST /api/invitations/{id}/accept). The answer is the same whether or not an account has the email.',
  })
  @ApiCreatedResponse({ type: InvitationResponseDto })
  @ApiErrors(
    'VALIDATION_ERROR',
    'WORKSPACE_NOT_FOUND',
    'PERMISSION_DENIED',
    'FEATURE_LIMIT_REACHED',
    'SUBSCRIPTION_PAST_DUE',
  )
  addMember(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: AddMemberDto,
  ): Promise<InvitationResponseDto> {
    return this.workspaces.invite(auth.user.id, id, body.email, body.role);
  }

  @Get(':id/invitations')
  @ApiOperation({ summary: "The workspace's pending invitations (admins and the owner)" })
  @ApiOkResponse({ type: InvitationListDto })
  @ApiErrors('WORKSPACE_NOT_FOUND', 'PERMISSION_DENIED')
  invitations(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<InvitationListDto> {
    return this.workspaces.listInvitations(auth.user.id, id);
  }

  @Delete(':id/invitations/:invitationId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Revoke a pending invitation (admins and the owner)' })
  @ApiNoContentResponse({ description: 'The invitation is revoked' })
  @ApiErrors('WORKSPACE_NOT_FOUND', 'PERMISSION_DENIED', 'NOT_FOUND')
  revokeInvitation(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Param('invitationId') invitationId: string,
  ): Promise<void> {
    return this.workspaces.revokeInvitation(auth.user.id, id, invitationId);
  }

  @Get(':id/members')
  @ApiOperation({ summary: 'The members and their roles' })
  @ApiOkResponse({ type: MemberListDto })
  @ApiErrors('WORKSPACE_NOT_FOUND')
  members(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<MemberListDto> {
    return this.workspaces.listMembers(auth.user.id, id);
  }

  @Patch(':id/members/:userId')
  @ApiOperation({ summary: "Change a member's role (ROLE_CHANGE_FORBIDDEN for the owner)" })
  @ApiOkResponse({ type: MemberResponseDto })
  @ApiErrors(
    'VALIDATION_ERROR',
    'WORKSPACE_NOT_FOUND',
    'PERMISSION_DENIED',
    'MEMBER_NOT_FOUND',
    'ROLE_CHANGE_FORBIDDEN',
  )
  changeRole(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() body: ChangeRoleDto,
  ): Promise<MemberResponseDto> {
    return this.workspaces.changeRole(auth.user.id, id, userId, body.role);
  }

  @Delete(':id/members/:userId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove a member (or leave); the owner cannot be removed' })
  @ApiNoContentResponse({ description: 'The member is removed' })
  @ApiErrors('WORKSPACE_NOT_FOUND', 'PERMISSION_DENIED', 'MEMBER_NOT_FOUND', 'ROLE_CHANGE_FORBIDDEN')
  remove(@CurrentUser() auth: AuthUser, @Param('id') id: string, @Param('userId') userId: string): Promise<void> {
    return this.workspaces.removeMember(auth.user.id, id, userId);
  }

  @Post(':id/transfer-ownership')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Make another member the owner (owner only); you become an admin' })
  @ApiOkResponse({ type: WorkspaceResponseDto, description: 'The workspace, with your new role (admin)' })
  @ApiErrors('VALIDATION_ERROR', 'WORKSPACE_NOT_FOUND', 'PERMISSION_DENIED', 'MEMBER_NOT_FOUND', 'WORKSPACE_REQUIRED')
  transfer(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: TransferOwnershipDto,
  ): Promise<WorkspaceResponseDto> {
    return this.workspaces.transferOwnership(auth.user.id, id, body.userId);
  }
}
