import { Injectable } from '@nestjs/common';
import { limitsOf, requireBelow, requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import type { UserEntity } from '../users/user.entity.js';
import { roleAtLeast } from './scope.js';
import type { AssignableRole } from './dto/workspace.dto.js';
import type { WorkspaceEntity, WorkspaceMemberEntity, WorkspaceRole } from './workspace.entities.js';
import { type InvitationRow, WorkspacesRepository } from './workspaces.repository.js';
import { UUID } from '../common/ids.js';
import { normalizeEmail } from '../users/user-fields.js';

/** How long an invitation can be accepted: after that it is gone (inviting again renews it). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

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

/**
 * A pending invitation. The same fields whether or not an account has the email: an invitation tells
 * its inviter nothing about who is registered.
 */
export interface InvitationResponse {
  id: string;
  workspaceId: string;
  workspaceName: string;
  email: string;
  role: AssignableRole;
  invitedBy: string | null;
  invitedByEmail: string | null;
  createdAt: string;
  expiresAt: string;
}

function toInvitationResponse(row: InvitationRow): InvitationResponse {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    workspaceName: row.workspaceName,
    email: row.email,
    role: row.role,
    invitedBy: row.invitedBy,
    invitedByEmail: row.invitedByEmail,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
  };
}

const INVITATION_NOT_FOUND = 'No pending invitation with this id';

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

  /**
   * Invites an email address with a role (admins and the owner). Nobody becomes a member until the
   * invited user accepts, and the answer is the same, with the same queries, whether or not an account
   * has the address. An address that is already a member's is refused: the members list shows it anyway.
   */
  async invite(userId: string, workspaceId: string, email: string, role: AssignableRole): Promise<InvitationResponse> {
    const { workspace, role: mine } = await this.membership(userId, workspaceId);
    this.requireAdmin(mine, 'Inviting members');
    const address = normalizeEmail(email);
    return this.workspaces.withLockedOwner(workspace.ownerId, async ({ owner, em }) => {
      if (await this.workspaces.isMemberByEmail(em, workspaceId, address)) {
        throw AppError.validation([{ field: 'email', message: 'this user is already a member' }]);
      }
      requireBelow(
        owner,
        await this.workspaces.countMembers(em, workspaceId),
        (l) => l.workspaceMembers,
        'FEATURE_LIMIT_REACHED',
        'workspace members',
      );
      const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
      const id = await this.workspaces.upsertInvitation(em, {
        workspaceId,
        email: address,
        role,
        invitedBy: userId,
        expiresAt,
      });
      return toInvitationResponse((await this.workspaces.findPendingInvitation(id, em))!);
    });
  }

  /** A workspace's pending invitations (admins and the owner). */
  async listInvitations(
    userId: string,
    workspaceId: string,
  ): Promise<{ items: InvitationResponse[]; nextCursor: null }> {
    const { role } = await this.membership(userId, workspaceId);
    this.requireAdmin(role, 'Seeing the invitations');
    const rows = await this.workspaces.listWorkspaceInvitations(workspaceId);
    return { items: rows.map(toInvitationResponse), nextCursor: null };
  }

  /** Withdraws a pending invitation (admins and the owner); NOT_FOUND for one this workspace has not. */
  async revokeInvitation(userId: string, workspaceId: string, invitationId: string): Promise<void> {
    const { role } = await this.membership(userId, workspaceId);
    this.requireAdmin(role, 'Revoking invitations');
    if (!UUID.test(invitationId) || !(await this.workspaces.deleteInvitation(workspaceId, invitationId))) {
      throw new AppError('NOT_FOUND', INVITATION_NOT_FOUND);
    }
  }

  /** The signed-in user's pending invitations: those addressed to their account's email. */
  async myInvitations(user: UserEntity): Promise<{ items: InvitationResponse[]; nextCursor: null }> {
    const rows = await this.workspaces.listInvitationsForEmail(normalizeEmail(user.email));
    return { items: rows.map(toInvitationResponse), nextCursor: null };
  }

  /**
   * Accepts an invitation addressed to the caller's email: they become a member with the invited role,
   * within the workspace owner's member limit (checked now, under the owner's lock, as adding a member
   * always was). Someone else's, unknown, expired or used invitation: NOT_FOUND.
   */
  async acceptInvitation(user: UserEntity, invitationId: string): Promise<WorkspaceResponse> {
    const address = normalizeEmail(user.email);
    const pending = UUID.test(invitationId) ? await this.workspaces.findPendingInvitation(invitationId) : null;
    if (pending === null || pending.email !== address) {
      throw new AppError('NOT_FOUND', INVITATION_NOT_FOUND);
    }
    const workspace = await this.workspaces.findWorkspace(pending.workspaceId);
    if (workspace === null) {
      throw new AppError('NOT_FOUND', INVITATION_NOT_FOUND);
    }
    return this.workspaces.withLockedOwner(workspace.ownerId, async ({ owner, em }) => {
      const taken = await this.workspaces.takeInvitationFor(invitationId, address, em);
      if (taken === null) {
        throw new AppError('NOT_FOUND', INVITATION_NOT_FOUND);
      }
      // Already a member (an invitation sent before they joined some other way): it is used up, the role kept.
      const current = await this.workspaces.findMemberIn(em, taken.workspaceId, user.id);
      if (current !== null) {
        return this.toResponse(workspace, current.role);
      }
      requireBelow(
        owner,
        await this.workspaces.countMembers(em, taken.workspaceId),
        (l) => l.workspaceMembers,
        'FEATURE_LIMIT_REACHED',
        'workspace members',
      );
      await this.workspaces.insertMember(em, { workspaceId: taken.workspaceId, userId: user.id, role: taken.role });
      return this.toResponse(workspace, taken.role);
    });
  }

  /** Declines an invitation addressed to the caller's email (it is deleted); NOT_FOUND as for accepting. */
  async declineInvitation(user: UserEntity, invitationId: string): Promise<void> {
    const taken = UUID.test(invitationId)
      ? await this.workspaces.takeInvitationFor(invitationId, normalizeEmail(user.email))
      : null;
    if (taken === null) {
      throw new AppError('NOT_FOUND', INVITATION_NOT_FOUND);
    }
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
