import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { AddMemberDto, ChangeRoleDto, CreateWorkspaceDto, TransferOwnershipDto } from './dto/workspace.dto.js';
import { type MemberResponse, type WorkspaceResponse, WorkspacesService } from './workspaces.service.js';

@ApiTags('workspaces')
@ApiBearerAuth()
@TermsRequired()
@Controller('workspaces')
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @ApiOperation({ summary: 'Create a Team workspace (TIER_REQUIRED below team); you are its owner' })
  create(@CurrentUser() auth: AuthUser, @Body() body: CreateWorkspaceDto): Promise<WorkspaceResponse> {
    return this.workspaces.create(auth.user, body.name);
  }

  @Get()
  @ApiOperation({ summary: 'Your workspaces, with your role in each' })
  list(@CurrentUser() auth: AuthUser) {
    return this.workspaces.list(auth.user.id);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One workspace (WORKSPACE_NOT_FOUND for non-members)' })
  get(@CurrentUser() auth: AuthUser, @Param('id') id: string): Promise<WorkspaceResponse> {
    return this.workspaces.get(auth.user.id, id);
  }

  @Post(':id/members')
  @ApiOperation({ summary: 'Add a member (admins and the owner)' })
  addMember(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: AddMemberDto,
  ): Promise<MemberResponse> {
    return this.workspaces.addMember(auth.user.id, id, body.email, body.role);
  }

  @Get(':id/members')
  @ApiOperation({ summary: 'The members and their roles' })
  members(@CurrentUser() auth: AuthUser, @Param('id') id: string) {
    return this.workspaces.listMembers(auth.user.id, id);
  }

  @Patch(':id/members/:userId')
  @ApiOperation({ summary: "Change a member's role (ROLE_CHANGE_FORBIDDEN for the owner)" })
  changeRole(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() body: ChangeRoleDto,
  ): Promise<MemberResponse> {
    return this.workspaces.changeRole(auth.user.id, id, userId, body.role);
  }

  @Delete(':id/members/:userId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove a member (or leave); the owner cannot be removed' })
  remove(@CurrentUser() auth: AuthUser, @Param('id') id: string, @Param('userId') userId: string): Promise<void> {
    return this.workspaces.removeMember(auth.user.id, id, userId);
  }

  @Post(':id/transfer-ownership')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Make another member the owner (owner only); you become an admin' })
  transfer(
    @CurrentUser() auth: AuthUser,
    @Param('id') id: string,
    @Body() body: TransferOwnershipDto,
  ): Promise<WorkspaceResponse> {
    return this.workspaces.transferOwnership(auth.user.id, id, body.userId);
  }
}
