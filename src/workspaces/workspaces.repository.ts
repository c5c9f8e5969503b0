import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import { WorkspaceEntity, WorkspaceMemberEntity, type WorkspaceRole } from './workspace.entities.js';
import { lockUserRow } from '../users/user-lock.js';

/** A member as the members list reads it (with the user's email and name). */
export interface MemberRow {
  userId: string;
  email: string;
  name: string | null;
  role: WorkspaceRole;
  joinedAt: Date;
}

/** What a limited write's transaction offers: the limits owner, locked until it ends, and the manager. */
export interface LockedOwner {
  owner: UserEntity;
  em: EntityManager;
}

/**
 * The SQL of workspaces and their members: TypeORM for reads and writes, one raw join for the members
 * list. Writes bounded by a plan limit run in a transaction that locks the limits owner's row first.
 */
@Injectable()
export class WorkspacesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private members(em: EntityManager = this.dataSource.manager) {
    return em.getRepository(WorkspaceMemberEntity);
  }

  findMember(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.members().findOneBy({ workspaceId, userId });
  }

  findWorkspace(id: string): Promise<WorkspaceEntity | null> {
    return this.dataSource.getRepository(WorkspaceEntity).findOneBy({ id });
  }

  findUserByEmail(email: string): Promise<UserEntity | null> {
    return this.dataSource.getRepository(UserEntity).findOneBy({ email });
  }

  findUserOrFail(id: string): Promise<UserEntity> {
    return this.dataSource.getRepository(UserEntity).findOneByOrFail({ id });
  }

  /** Runs `work` in a transaction that first locks the row of the user whose plan limits the write. */
  withLockedOwner<T>(ownerId: string, work: (tx: LockedOwner) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (em) => {
      const owner = await lockUserRow(em, ownerId);
      return work({ owner, em });
    });
  }

  countOwned(em: EntityManager, ownerId: string): Promise<number> {
    return em.getRepository(WorkspaceEntity).countBy({ ownerId });
  }

  /** A new workspace and its owner's membership, in `em`'s transaction. */
  async insertWorkspace(em: EntityManager, name: string, ownerId: string): Promise<WorkspaceEntity> {
    const workspace = await em.getRepository(WorkspaceEntity).save({ name, ownerId });
    await this.members(em).insert({ workspaceId: workspace.id, userId: ownerId, role: 'owner' });
    return workspace;
  }

  isMember(em: EntityManager, workspaceId: string, userId: string): Promise<boolean> {
    return this.members(em).existsBy({ workspaceId, userId });
  }

  countMembers(em: EntityManager, workspaceId: string): Promise<number> {
    return this.members(em).countBy({ workspaceId });
  }

  insertMember(
    em: EntityManager,
    member: Pick<WorkspaceMemberEntity, 'workspaceId' | 'userId' | 'role'>,
  ): Promise<WorkspaceMemberEntity> {
    return this.members(em).save(member);
  }

  /** The user's membership of a workspace; null also for a workspace that does not exist. */
  findMembership(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.dataSource.getRepository(WorkspaceMemberEntity).findOneBy({ workspaceId, userId });
  }

  /** The owner's row of a workspace: the owner's tier holds the workspace's limits. */
  findOwner(workspaceId: string): Promise<UserEntity> {
    return this.dataSource
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin('workspaces', 'w', 'w.owner_id = u.id')
      .where('w.id = :id', { id: workspaceId })
      .getOneOrFail();
  }

  /** The user's workspaces in creation order, each with the user's membership. */
  async listForUser(userId: string): Promise<Array<{ workspace: WorkspaceEntity; role: WorkspaceRole }>> {
    const rows = await this.dataSource
      .getRepository(WorkspaceEntity)
      .createQueryBuilder('w')
      .innerJoinAndMapOne('w.membership', WorkspaceMemberEntity, 'm', 'm.workspace_id = w.id AND m.user_id = :userId', {
        userId,
      })
      .orderBy('w.created_at', 'ASC')
      .getMany();
    return rows.map((w) => ({
      workspace: w,
      role: (w as WorkspaceEntity & { membership: WorkspaceMemberEntity }).membership.role,
    }));
  }

  async listMembers(workspaceId: string): Promise<MemberRow[]> {
    const rows: Array<{ user_id: string; email: string; name: string | null; role: WorkspaceRole; created_at: Date }> =
      await this.dataSource.query(
        `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM workspace_members m JOIN users u ON u.id = m.user_id
        WHERE m.workspace_id = $1 ORDER BY m.created_at, m.user_id`,
        [workspaceId],
      );
    return rows.map((r) => ({ userId: r.user_id, email: r.email, name: r.name, role: r.role, joinedAt: r.created_at }));
  }

  async setRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.members().update({ workspaceId, userId }, { role });
  }

  async deleteMember(workspaceId: string, userId: string): Promise<void> {
    await this.members().delete({ workspaceId, userId });
  }

  /** The old owner becomes an admin and the new one the owner, in one transaction. */
  async transferOwnership(workspaceId: string, oldOwnerId: string, newOwnerId: string): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      await this.members(em).update({ workspaceId, userId: oldOwnerId }, { role: 'admin' });
      await this.members(em).update({ workspaceId, userId: newOwnerId }, { role: 'owner' });
      await em.getRepository(WorkspaceEntity).update({ id: workspaceId }, { ownerId: newOwnerId });
    });
  }
}
