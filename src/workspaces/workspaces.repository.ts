import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import {
  WorkspaceEntity,
  WorkspaceInvitationEntity,
  WorkspaceMemberEntity,
  type WorkspaceRole,
} from './workspace.entities.js';
import { lockUserRow } from '../users/user-lock.js';

/** A member as the members list reads it (with the user's email and name). */
export interface MemberRow {
  userId: string;
  email: string;
  name: string | null;
  role: WorkspaceRole;
  joinedAt: Date;
}

/** A pending invitation as the lists read it (with the workspace's name and the inviter's email). */
export interface InvitationRow {
  id: string;
  workspaceId: string;
  workspaceName: string;
  email: string;
  role: Exclude<WorkspaceRole, 'owner'>;
  invitedBy: string | null;
  invitedByEmail: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** The columns of an InvitationRow, from `workspace_invitations i JOIN workspaces w LEFT JOIN users u`. */
const INVITATION_COLUMNS = `i.id, i.workspace_id AS "workspaceId", w.name AS "workspaceName", i.email, i.role,
  i.invited_by AS "invitedBy", u.email AS "invitedByEmail", i.created_at AS "createdAt", i.expires_at AS "expiresAt"`;
const INVITATION_FROM = `workspace_invitations i JOIN workspaces w ON w.id = i.workspace_id
  LEFT JOIN users u ON u.id = i.invited_by`;

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

  findMemberIn(em: EntityManager, workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.members(em).findOneBy({ workspaceId, userId });
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

  /**
   * Whether the user with this (normalized) email is a member. One query whether or not such a user
   * exists, so an invitation's answer takes the same time either way.
   */
  async isMemberByEmail(em: EntityManager, workspaceId: string, email: string): Promise<boolean> {
    const rows: unknown[] = await em.query(
      `SELECT 1 FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND u.email = $2`,
      [workspaceId, email],
    );
    return rows.length > 0;
  }

  /**
   * Invites `email` (normalized) with a role: a new pending invitation, or the pending (or expired)
   * one of this workspace and email renewed with the new role, inviter and expiry.
   */
  async upsertInvitation(
    em: EntityManager,
    invitation: Pick<WorkspaceInvitationEntity, 'workspaceId' | 'email' | 'role' | 'invitedBy' | 'expiresAt'>,
  ): Promise<string> {
    const rows: Array<{ id: string }> = await em.query(
      `INSERT INTO workspace_invitations (workspace_id, email, role, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (workspace_id, email) DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by,
         created_at = now(), expires_at = EXCLUDED.expires_at
       RETURNING id`,
      [invitation.workspaceId, invitation.email, invitation.role, invitation.invitedBy, invitation.expiresAt],
    );
    return rows[0]!.id;
  }

  /** One pending (unexpired) invitation, read in `em` (a transaction's, to read its own write). */
  async findPendingInvitation(id: string, em: EntityManager = this.dataSource.manager): Promise<InvitationRow | null> {
    const rows: InvitationRow[] = await em.query(
      `SELECT ${INVITATION_COLUMNS} FROM ${INVITATION_FROM} WHERE i.id = $1 AND i.expires_at > now()`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** A workspace's pending invitations, oldest first. */
  listWorkspaceInvitations(workspaceId: string): Promise<InvitationRow[]> {
    return this.dataSource.query(
      `SELECT ${INVITATION_COLUMNS} FROM ${INVITATION_FROM} WHERE i.workspace_id = $1 AND i.expires_at > now()
       ORDER BY i.created_at, i.id`,
      [workspaceId],
    );
  }

  /** The pending invitations of an email address (normalized), oldest first. */
  listInvitationsForEmail(email: string): Promise<InvitationRow[]> {
    return this.dataSource.query(
      `SELECT ${INVITATION_COLUMNS} FROM ${INVITATION_FROM} WHERE i.email = $1 AND i.expires_at > now()
       ORDER BY i.created_at, i.id`,
      [email],
    );
  }

  /**
   * Deletes the pending invitation `id` if it is addressed to `email` (accepting or declining it);
   * returns it, or null when there is none (unknown, someone else's, expired, or already used).
   */
  async takeInvitationFor(
    id: string,
    email: string,
    em: EntityManager = this.dataSource.manager,
  ): Promise<Pick<WorkspaceInvitationEntity, 'workspaceId' | 'role'> | null> {
    const [rows]: [Array<{ workspaceId: string; role: Exclude<WorkspaceRole, 'owner'> }>, number] = await em.query(
      `DELETE FROM workspace_invitations WHERE id = $1 AND email = $2 AND expires_at > now()
       RETURNING workspace_id AS "workspaceId", role`,
      [id, email],
    );
    return rows[0] ?? null;
  }

  /** Revokes a pending invitation of the workspace; false when it has none with this id. */
  async deleteInvitation(workspaceId: string, id: string): Promise<boolean> {
    const [rows]: [unknown[], number] = await this.dataSource.query(
      `DELETE FROM workspace_invitations WHERE id = $1 AND workspace_id = $2 AND expires_at > now() RETURNING id`,
      [id, workspaceId],
    );
    return rows.length > 0;
  }
}
