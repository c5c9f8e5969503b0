import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceEntity, WorkspaceInvitationEntity, WorkspaceMemberEntity } from './workspace.entities.js';
import { InvitationsController } from './invitations.controller.js';
import { WorkspacesController } from './workspaces.controller.js';
import { WorkspacesRepository } from './workspaces.repository.js';
import { WorkspacesService } from './workspaces.service.js';
import { ScopeResolver } from './scope-resolver.js';

@Module({
  imports: [TypeOrmModule.forFeature([WorkspaceEntity, WorkspaceMemberEntity, WorkspaceInvitationEntity])],
  controllers: [WorkspacesController, InvitationsController],
  providers: [WorkspacesService, WorkspacesRepository, ScopeResolver],
  // For the workspace scope guard, which the application registers as a global guard after
  // authentication; its scope resolver for the MCP endpoint too, which builds its callers' scopes with it.
  exports: [WorkspacesRepository, ScopeResolver],
})
export class WorkspacesModule {}
