import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { limitsOf, requireBelow, requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { UserEntity } from '../users/user.entity.js';
import { roleAtLeast } from './scope.js';
import type { AssignableRole } from './dto/workspace.dto.js';
import { WorkspaceEntity, WorkspaceMemberEntity, type WorkspaceRole } from './workspace.entities.js';
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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private members(em: EntityManager = this.dataSource.manager) {
    return em.getRepository(WorkspaceMemberEntity);
  }

  /** The caller's membership, or WORKSPACE_NOT_FOUND (for a workspace that does not exist, too). */
  async membership(userId: string, workspaceId: string): Promise<{ workspace: WorkspaceEntity; role: WorkspaceRole }> {
    const member = UUID.test(workspaceId) ? await this.members().findOneBy({ workspaceId, userId }) : null;
    const workspace =
      member === null ? null : await this.dataSource.getRepository(WorkspaceEntity).findOneBy({ id: workspaceId });
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
    return this.dataSource.transaction(async (em) => {
      const owner = await em
        .getRepository(UserEntity)
        .createQueryBuilder('u')
        .setLock('pessimistic_write')
        .where('u.id = :id', { id: user.id })
        .getOneOrFail();
      const owned = await em.getRepository(WorkspaceEntity).countBy({ ownerId: user.id });
      requireBelow(owner, owned, (l) => l.workspaces, 'FEATURE_LIMIT_REACHED', 'workspaces');
      const workspace = await em.getRepository(WorkspaceEntity).save({ name, ownerId: user.id });
      await this.members(em).insert({ workspaceId: workspace.id, userId: user.id, role: 'owner' });
      return this.toResponse(workspace, 'owner');
    });
  }

  async list(userId: string): Promise<{ items: WorkspaceResponse[]; nextCursor: null }> {
    const rows = await this.dataSource
      .getRepository(WorkspaceEntity)
      .createQueryBuilder('w')
      .innerJoinAndMapOne('w.membership', WorkspaceMemberEntity, 'm', 'm.workspace_id = w.id AND m.user_id = :userId', {
        userId,
      })
      .orderBy('w.created_at', 'ASC')
      .getMany();
    return {
      items: rows.map((w) =>
        this.toResponse(w, (w as WorkspaceEntity & { membership: WorkspaceMemberEntity }).membership.role),
      ),
      nextCursor: null,
    };
  }

  async get(userId: string, workspaceId: string): Promise<WorkspaceResponse> {
    const { workspace, role } = await this.membership(userId, workspaceId);
    return this.toResponse(workspace, role);
  }

  async listMembers(userId: string, workspaceId: string): Promise<{ items: MemberResponse[]; nextCursor: null }> {
    await this.membership(userId, workspaceId);
    const rows: Array<{ user_id: string; email: string; name: string | null; role: WorkspaceRole; created_at: Date }> =
      await this.dataSource.query(
        `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM workspace_members m JOIN users u ON u.id = m.user_id
        WHERE m.workspace_id = $1 ORDER BY m.created_at, m.user_id`,
        [workspaceId],
      );
    return {
      items: rows.map((r) => ({
        userId: r.user_id,
        email: r.email,
        name: r.name,
        role: r.role,
        joinedAt: new Date(r.created_at).toISOString(),
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
    const invitee = await this.dataSource.getRepository(UserEntity).findOneBy({ email: email.trim().toLowerCase() });
    if (invitee === null) {
      throw AppError.validation([{ field: 'email', message: 'no user has this email' }]);
    }
    return this.dataSource.transaction(async (em) => {
      const owner = await em
        .getRepository(UserEntity)
        .createQueryBuilder('u')
        .setLock('pessimistic_write')
        .where('u.id = :id', { id: workspace.ownerId })
        .getOneOrFail();
      if (await this.members(em).existsBy({ workspaceId, userId: invitee.id })) {
        throw AppError.validation([{ field: 'email', message: 'this user is already a member' }]);
      }
      requireBelow(
        owner,
        await this.members(em).countBy({ workspaceId }),
        (l) => l.workspaceMembers,
        'FEATURE_LIMIT_REACHED',
        'workspace members',
      );
      const row = await this.members(em).save({ workspaceId, userId: invitee.id, role });
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
    const member = UUID.test(userId) ? await this.members().findOneBy({ workspaceId, userId }) : null;
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
    await this.members().update({ workspaceId, userId: memberId }, { role });
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
    await this.members().delete({ workspaceId, userId: memberId });
  }

  async transferOwnership(userId: string, workspaceId: string, newOwnerId: string): Promise<WorkspaceResponse> {
    const { workspace, role } = await this.membership(userId, workspaceId);
    if (role !== 'owner') {
      throw new AppError('PERMISSION_DENIED', 'Only the owner can transfer the ownership');
    }
    await this.memberOrFail(workspaceId, newOwnerId);
    const newOwner = await this.dataSource.getRepository(UserEntity).findOneByOrFail({ id: newOwnerId });
    if (limitsOf(newOwner).workspaces === 0) {
      throw new AppError('WORKSPACE_REQUIRED', 'The new owner must be on the Team plan to own a workspace');
    }
    await this.dataSource.transaction(async (em) => {
      await this.members(em).update({ workspaceId, userId }, { role: 'admin' });
      await this.members(em).update({ workspaceId, userId: newOwnerId }, { role: 'owner' });
      await em.getRepository(WorkspaceEntity).update({ id: workspaceId }, { ownerId: newOwnerId });
    });
    return this.toResponse({ ...workspace, ownerId: newOwnerId }, 'admin');
  }
}
