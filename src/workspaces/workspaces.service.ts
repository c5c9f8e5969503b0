import { Injectable } from '@nestjs/common';
import { limitsOf, requireBelow, requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import type { UserEntity } from '../users/user.entity.js';
import { roleAtLeast } from './scope.js';
import type { AssignableRole } from './dto/workspace.dto.js';
import type { WorkspaceEntity, WorkspaceMemberEntity, WorkspaceRole } from './workspace.entities.js';
import { WorkspacesRepository } from './workspaces.repository.js';
import { UUID } from '../common/ids.js';

export interface WorkspaceResponse {
  id: string;
  name: string;
  ownerId: string;
  role: WorkspaceRole;
  createdAt: string;
}

export interface MemberResponse {
  userId: string;
  email: string;
  name: string | null;
  role: WorkspaceRole;
  joinedAt: string;
}

/** Team workspaces and their members. Roles: owner ⊃ admin (members, sites, agents) ⊃ member ⊃ viewer. */
@Injectable()
export class WorkspacesService {
  constructor(private readonly workspaces: WorkspacesRepository) {}

  /** The caller's membership, or WORKSPACE_NOT_FOUND (for a workspace that does not exist, too). */
  async membership(userId: string, workspaceId: string): Promise<{ workspace: WorkspaceEntity; role: WorkspaceRole }> {
    const member = UUID.test(workspaceId) ? await this.workspaces.findMember(workspaceId, userId) : null;
    const workspace = member === null ? null : await this.workspaces.findWorkspace(workspaceId);
    if (member === null || workspace === null) {
      throw new AppError('WORKSPACE_NOT_FOUND', 'No workspace with this id');
    }
    return { workspace, role: member.role };
  }

  private toResponse(workspace: WorkspaceEntity, role: WorkspaceRole): WorkspaceResponse {
    return {
      id: workspace.id,
      name: workspace.name,
      ownerId: workspace.ownerId,
      role,
      createdAt: workspace.createdAt.toISOString(),
    };
  }

  async create(user: UserEntity, name: string): Promise<WorkspaceResponse> {
    requireFeature(user, (l) => l.workspaces > 0, 'Workspaces (Team plan)');
    return this.workspaces.withLockedOwner(user.id, async ({ owner, em }) => {
      const owned = await this.workspaces.countOwned(em, user.id);
      requireBelow(owner, owned, (l) => l.workspaces, 'FEATURE_LIMIT_REACHED', 'workspaces');
      const workspace = await this.workspaces.insertWorkspace(em, name, user.id);
      return this.toResponse(workspace, 'owner');
    });
  }

  async list(userId: string): Promise<{ items: WorkspaceResponse[]; nextCursor: null }> {
    const rows = await this.workspaces.listForUser(userId);
    return {
      items: rows.map(({ workspace, role }) => this.toResponse(workspace, role)),
      nextCursor: null,
    };
  }

  async get(userId: string, workspaceId: string): Promise<WorkspaceResponse> {
    const { workspace, role } = await this.membership(userId, workspaceId);
    return this.toResponse(workspace, role);
  }

  async listMembers(userId: string, workspaceId: string): Promise<{ items: MemberResponse[]; nextCursor: null }> {
    await this.membership(userId, workspaceId);
    const rows = await this.workspaces.listMembers(workspaceId);
    return {
      items: rows.map((r) => ({
        userId: r.userId,
        email: r.email,
        name: r.name,
        role: r.role,
        joinedAt: new Date(r.joinedAt).toISOString(),
      })),
      nextCursor: null,
    };
  }

  private requireAdmin(role: WorkspaceRole, action: string): void {
    if (!roleAtLeast(role, 'admin')) {
      throw new AppError('PERMISSION_DENIED', `${action} needs the admin role in this workspace (you are ${role})`);
    }
  }

  async addMember(userId: string, workspaceId: string, email: string, role: AssignableRole): Promise<MemberResponse> {
    const { workspace, role: mine } = await this.membership(userId, workspaceId);
    this.requireAdmin(mine, 'Adding members');
    const invitee = await this.workspaces.findUserByEmail(email.trim().toLowerCase());
    if (invitee === null) {
      throw AppError.validation([{ field: 'email', message: 'no user has this email' }]);
    }
    return this.workspaces.withLockedOwner(workspace.ownerId, async ({ owner, em }) => {
      if (await this.workspaces.isMember(em, workspaceId, invitee.id)) {
        throw AppError.validation([{ field: 'email', message: 'this user is already a member' }]);
      }
      requireBelow(
        owner,
        await this.workspaces.countMembers(em, workspaceId),
        (l) => l.workspaceMembers,
        'FEATURE_LIMIT_REACHED',
        'workspace members',
      );
      const row = await this.workspaces.insertMember(em, { workspaceId, userId: invitee.id, role });
      return {
        userId: invitee.id,
        email: invitee.email,
        name: invitee.name,
        role,
        joinedAt: row.createdAt.toISOString(),
      };
    });
  }

  private async memberOrFail(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity> {
    const member = UUID.test(userId) ? await this.workspaces.findMember(workspaceId, userId) : null;
    if (member === null) {
      throw new AppError('MEMBER_NOT_FOUND', 'This user is not a member of the workspace');
    }
    return member;
  }

  async changeRole(
    userId: string,
    workspaceId: string,
    memberId: string,
    role: AssignableRole,
  ): Promise<MemberResponse> {
    const { role: mine } = await this.membership(userId, workspaceId);
    this.requireAdmin(mine, 'Changing roles');
    const member = await this.memberOrFail(workspaceId, memberId);
    if (member.role === 'owner') {
      throw new AppError(
        'ROLE_CHANGE_FORBIDDEN',
        "The owner's role cannot be changed here: transfer the ownership instead",
      );
    }
    await this.workspaces.setRole(workspaceId, memberId, role);
    return (await this.listMembers(userId, workspaceId)).items.find((m) => m.userId === memberId)!;
  }

  async removeMember(userId: string, workspaceId: string, memberId: string): Promise<void> {
    const { role: mine } = await this.membership(userId, workspaceId);
    if (memberId !== userId) {
      this.requireAdmin(mine, 'Removing members');
    }
    const member = await this.memberOrFail(workspaceId, memberId);
    if (member.role === 'owner') {
      throw new AppError('ROLE_CHANGE_FORBIDDEN', 'The owner cannot be removed: transfer the ownership first');
    }
    await this.workspaces.deleteMember(workspaceId, memberId);
  }

  async transferOwnership(userId: string, workspaceId: string, newOwnerId: string): Promise<WorkspaceResponse> {
    const { workspace, role } = await this.membership(userId, workspaceId);
    if (role !== 'owner') {
      throw new AppError('PERMISSION_DENIED', 'Only the owner can transfer the ownership');
    }
    await this.memberOrFail(workspaceId, newOwnerId);
    const newOwner = await this.workspaces.findUserOrFail(newOwnerId);
    if (limitsOf(newOwner).workspaces === 0) {
      throw new AppError('WORKSPACE_REQUIRED', 'The new owner must be on the Team plan to own a workspace');
    }
    await this.workspaces.transferOwnership(workspaceId, userId, newOwnerId);
    return this.toResponse({ ...workspace, ownerId: newOwnerId }, 'admin');
  }
}
