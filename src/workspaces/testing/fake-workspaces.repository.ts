import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import type {
  WorkspaceEntity,
  WorkspaceInvitationEntity,
  WorkspaceMemberEntity,
  WorkspaceRole,
} from '../workspace.entities.js';
import type { InvitationRow, LockedOwner, MemberRow, WorkspacesRepository } from '../workspaces.repository.js';

type Used =
  | 'findMember'
  | 'findWorkspace'
  | 'findUserOrFail'
  | 'withLockedOwner'
  | 'countOwned'
  | 'insertWorkspace'
  | 'findMemberIn'
  | 'countMembers'
  | 'insertMember'
  | 'listForUser'
  | 'listMembers'
  | 'setRole'
  | 'deleteMember'
  | 'transferOwnership'
  | 'isMemberByEmail'
  | 'upsertInvitation'
  | 'findPendingInvitation'
  | 'listWorkspaceInvitations'
  | 'listInvitationsForEmail'
  | 'takeInvitationFor'
  | 'deleteInvitation';

const TX = {} as EntityManager;

/**
 * Workspaces, members, invitations and their users in memory, with the rules the SQL carries: one
 * invitation per (workspace, email), renewed by inviting again; an expired one is as if gone; taking
 * an invitation deletes it (single use).
 */
export class FakeWorkspacesRepository implements Pick<WorkspacesRepository, Used> {
  readonly users = new Map<string, UserEntity>();
  readonly workspaces = new Map<string, WorkspaceEntity>();
  members: WorkspaceMemberEntity[] = [];
  invitations: WorkspaceInvitationEntity[] = [];
  now = (): number => Date.now();

  seedUser(fields: Partial<UserEntity> & Pick<UserEntity, 'id'>): UserEntity {
    const user = Object.assign(new UserEntity(), {
      email: `u-${fields.id}@example.com`,
      name: null,
      tier: 'team',
      subscriptionStatus: 'active',
      ...fields,
    });
    this.users.set(user.id, user);
    return user;
  }

  seedWorkspace(id: string, ownerId: string, others: Array<[string, WorkspaceRole]> = []): WorkspaceEntity {
    const workspace = { id, name: `Workspace ${id.slice(0, 4)}`, ownerId, createdAt: new Date(this.now()) };
    this.workspaces.set(id, workspace);
    for (const [userId, role] of [[ownerId, 'owner'] as [string, WorkspaceRole], ...others]) {
      this.members.push({ workspaceId: id, userId, role, createdAt: new Date(this.now()) });
    }
    return workspace;
  }

  async findMember(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.members.find((m) => m.workspaceId === workspaceId && m.userId === userId) ?? null;
  }

  async findWorkspace(id: string): Promise<WorkspaceEntity | null> {
    return this.workspaces.get(id) ?? null;
  }

  async findUserOrFail(id: string): Promise<UserEntity> {
    const user = this.users.get(id);
    if (user === undefined) {
      throw new Error(`no user ${id}`);
    }
    return user;
  }

  async withLockedOwner<T>(ownerId: string, work: (tx: LockedOwner) => Promise<T>): Promise<T> {
    return work({ owner: await this.findUserOrFail(ownerId), em: TX });
  }

  async countOwned(_em: EntityManager, ownerId: string): Promise<number> {
    return [...this.workspaces.values()].filter((w) => w.ownerId === ownerId).length;
  }

  async insertWorkspace(_em: EntityManager, name: string, ownerId: string): Promise<WorkspaceEntity> {
    const workspace = this.seedWorkspace(randomUUID(), ownerId);
    workspace.name = name;
    return workspace;
  }

  async findMemberIn(_em: EntityManager, workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.findMember(workspaceId, userId);
  }

  async countMembers(_em: EntityManager, workspaceId: string): Promise<number> {
    return this.members.filter((m) => m.workspaceId === workspaceId).length;
  }

  async insertMember(
    _em: EntityManager,
    member: Pick<WorkspaceMemberEntity, 'workspaceId' | 'userId' | 'role'>,
  ): Promise<WorkspaceMemberEntity> {
    const row = { ...member, createdAt: new Date(this.now()) };
    this.members.push(row);
    return row;
  }

  async listForUser(userId: string): Promise<Array<{ workspace: WorkspaceEntity; role: WorkspaceRole }>> {
    return this.members
      .filter((m) => m.userId === userId)
      .map((m) => ({ workspace: this.workspaces.get(m.workspaceId)!, role: m.role }));
  }

  async listMembers(workspaceId: string): Promise<MemberRow[]> {
    return this.members
      .filter((m) => m.workspaceId === workspaceId)
      .map((m) => {
        const user = this.users.get(m.userId);
        return {
          userId: m.userId,
          email: user?.email ?? '',
          name: user?.name ?? null,
          role: m.role,
          joinedAt: m.createdAt,
        };
      });
  }

  async setRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    const member = await this.findMember(workspaceId, userId);
    if (member !== null) {
      member.role = role;
    }
  }

  async deleteMember(workspaceId: string, userId: string): Promise<void> {
    this.members = this.members.filter((m) => !(m.workspaceId === workspaceId && m.userId === userId));
  }

  async transferOwnership(workspaceId: string, oldOwnerId: string, newOwnerId: string): Promise<void> {
    await this.setRole(workspaceId, oldOwnerId, 'admin');
    await this.setRole(workspaceId, newOwnerId, 'owner');
    this.workspaces.get(workspaceId)!.ownerId = newOwnerId;
  }

  async isMemberByEmail(_em: EntityManager, workspaceId: string, email: string): Promise<boolean> {
    return this.members.some((m) => m.workspaceId === workspaceId && this.users.get(m.userId)?.email === email);
  }

  async upsertInvitation(
    _em: EntityManager,
    invitation: Pick<WorkspaceInvitationEntity, 'workspaceId' | 'email' | 'role' | 'invitedBy' | 'expiresAt'>,
  ): Promise<string> {
    const known = this.invitations.find(
      (i) => i.workspaceId === invitation.workspaceId && i.email === invitation.email,
    );
    if (known !== undefined) {
      Object.assign(known, invitation, { createdAt: new Date(this.now()) });
      return known.id;
    }
    const id = randomUUID();
    this.invitations.push({ id, ...invitation, createdAt: new Date(this.now()) });
    return id;
  }

  async findPendingInvitation(id: string): Promise<InvitationRow | null> {
    const found = this.pending().find((i) => i.id === id);
    return found === undefined ? null : this.row(found);
  }

  async listWorkspaceInvitations(workspaceId: string): Promise<InvitationRow[]> {
    return this.pending()
      .filter((i) => i.workspaceId === workspaceId)
      .map((i) => this.row(i));
  }

  async listInvitationsForEmail(email: string): Promise<InvitationRow[]> {
    return this.pending()
      .filter((i) => i.email === email)
      .map((i) => this.row(i));
  }

  async takeInvitationFor(
    id: string,
    email: string,
  ): Promise<Pick<WorkspaceInvitationEntity, 'workspaceId' | 'role'> | null> {
    const found = this.pending().find((i) => i.id === id && i.email === email);
    if (found === undefined) {
      return null;
    }
    this.invitations = this.invitations.filter((i) => i !== found);
    return { workspaceId: found.workspaceId, role: found.role };
  }

  async deleteInvitation(workspaceId: string, id: string): Promise<boolean> {
    const found = this.pending().find((i) => i.id === id && i.workspaceId === workspaceId);
    this.invitations = this.invitations.filter((i) => i !== found);
    return found !== undefined;
  }

  private pending(): WorkspaceInvitationEntity[] {
    return this.invitations.filter((i) => i.expiresAt.getTime() > this.now());
  }

  private row(i: WorkspaceInvitationEntity): InvitationRow {
    return {
      ...i,
      workspaceName: this.workspaces.get(i.workspaceId)?.name ?? '',
      invitedByEmail: i.invitedBy === null ? null : (this.users.get(i.invitedBy)?.email ?? null),
    };
  }
}
