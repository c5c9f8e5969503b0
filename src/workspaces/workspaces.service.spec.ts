import { describe, expect, it } from '@jest/globals';
import { standIn } from '../common/testing/stand-in.js';
import type { WorkspacesRepository } from './workspaces.repository.js';
import { INVITATION_TTL_MS, WorkspacesService } from './workspaces.service.js';
import { FakeWorkspacesRepository } from './testing/fake-workspaces.repository.js';
import { codeOf } from '../common/testing/refusals.js';

const WS = 'a0000000-0000-4000-8000-000000000001';
const OWNER = 'b0000000-0000-4000-8000-000000000001';
const ADMIN = 'b0000000-0000-4000-8000-000000000002';
const MEMBER = 'b0000000-0000-4000-8000-000000000003';
const VIEWER = 'b0000000-0000-4000-8000-000000000004';
const OUTSIDER = 'b0000000-0000-4000-8000-000000000005';

function setUp() {
  const rows = new FakeWorkspacesRepository();
  for (const id of [OWNER, ADMIN, MEMBER, VIEWER, OUTSIDER]) {
    rows.seedUser({ id });
  }
  rows.seedWorkspace(WS, OWNER, [
    [ADMIN, 'admin'],
    [MEMBER, 'member'],
    [VIEWER, 'viewer'],
  ]);
  const service = new WorkspacesService(standIn<WorkspacesRepository>(rows));
  return { rows, service, user: (id: string) => rows.users.get(id)! };
}

describe('WorkspacesService.membership', () => {
  it('answers the role of a member, and WORKSPACE_NOT_FOUND to anyone else or for an id that is not a UUID', async () => {
    const { service } = setUp();
    await expect(service.get(VIEWER, WS)).resolves.toMatchObject({ id: WS, role: 'viewer', ownerId: OWNER });
    expect(await codeOf(service.get(OUTSIDER, WS))).toBe('WORKSPACE_NOT_FOUND');
    expect(await codeOf(service.get(OWNER, 'not-a-uuid'))).toBe('WORKSPACE_NOT_FOUND');
  });
});

describe('WorkspacesService.create (plan limits)', () => {
  it('needs the Team plan (TIER_REQUIRED), paid (SUBSCRIPTION_PAST_DUE)', async () => {
    const { service, user } = setUp();
    expect(await codeOf(service.create({ ...user(OUTSIDER), tier: 'harness' }, 'X'))).toBe('TIER_REQUIRED');
    expect(await codeOf(service.create({ ...user(OUTSIDER), subscriptionStatus: 'past_due' }, 'X'))).toBe(
      'SUBSCRIPTION_PAST_DUE',
    );
  });

  it('lets a Team owner own five workspaces, the sixth refused (FEATURE_LIMIT_REACHED)', async () => {
    const { service, user } = setUp();
    for (let i = 0; i < 5; i += 1) {
      await expect(service.create(user(OUTSIDER), `W${i}`)).resolves.toMatchObject({
        role: 'owner',
        ownerId: OUTSIDER,
      });
    }
    expect(await codeOf(service.create(user(OUTSIDER), 'W5'))).toBe('FEATURE_LIMIT_REACHED');
  });
});

describe('WorkspacesService invitations', () => {
  it('lets admins and the owner invite, refusing members and viewers (PERMISSION_DENIED)', async () => {
    const { service } = setUp();
    await expect(service.invite(ADMIN, WS, 'new@example.com', 'member')).resolves.toMatchObject({
      email: 'new@example.com',
    });
    expect(await codeOf(service.invite(MEMBER, WS, 'x@example.com', 'member'))).toBe('PERMISSION_DENIED');
    expect(await codeOf(service.invite(VIEWER, WS, 'x@example.com', 'member'))).toBe('PERMISSION_DENIED');
    expect(await codeOf(service.listInvitations(MEMBER, WS))).toBe('PERMISSION_DENIED');
  });

  it('refuses inviting a member’s address, however it is spelled (VALIDATION_ERROR)', async () => {
    const { service, user } = setUp();
    expect(await codeOf(service.invite(OWNER, WS, `  ${user(MEMBER).email.toUpperCase()} `, 'viewer'))).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('renews an invitation sent again (one per address) with a seven-day expiry', async () => {
    const { service } = setUp();
    const first = await service.invite(OWNER, WS, 'New@Example.com', 'viewer');
    const again = await service.invite(ADMIN, WS, 'new@example.com', 'admin');
    expect(again.id).toBe(first.id);
    expect(again).toMatchObject({ email: 'new@example.com', role: 'admin', invitedBy: ADMIN });
    const ttl = new Date(again.expiresAt).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(INVITATION_TTL_MS - 5000);
    expect(ttl).toBeLessThanOrEqual(INVITATION_TTL_MS);
    expect((await service.listInvitations(OWNER, WS)).items).toHaveLength(1);
  });

  it('refuses an invitation past the owner’s member limit (FEATURE_LIMIT_REACHED)', async () => {
    const { rows, service } = setUp();
    for (let i = 4; i < 25; i += 1) {
      rows.members.push({ workspaceId: WS, userId: `filler-${i}`, role: 'viewer', createdAt: new Date() });
    }
    expect(await codeOf(service.invite(OWNER, WS, 'one-more@example.com', 'member'))).toBe('FEATURE_LIMIT_REACHED');
  });

  it('lets only the addressee accept, once, with the invited role', async () => {
    const { service, user } = setUp();
    const invitation = await service.invite(OWNER, WS, user(OUTSIDER).email, 'member');
    expect(await codeOf(service.acceptInvitation(user(VIEWER), invitation.id))).toBe('NOT_FOUND');
    await expect(service.acceptInvitation(user(OUTSIDER), invitation.id)).resolves.toMatchObject({
      id: WS,
      role: 'member',
    });
    expect(await codeOf(service.acceptInvitation(user(OUTSIDER), invitation.id))).toBe('NOT_FOUND');
    await expect(service.get(OUTSIDER, WS)).resolves.toMatchObject({ role: 'member' });
  });

  it('answers NOT_FOUND for an expired invitation, and for an id that is not a UUID', async () => {
    const { rows, service, user } = setUp();
    const invitation = await service.invite(OWNER, WS, user(OUTSIDER).email, 'member');
    const start = Date.now();
    rows.now = () => start + INVITATION_TTL_MS + 1;
    expect(await codeOf(service.acceptInvitation(user(OUTSIDER), invitation.id))).toBe('NOT_FOUND');
    expect(await codeOf(service.declineInvitation(user(OUTSIDER), 'nope'))).toBe('NOT_FOUND');
  });

  it('checks the member limit again when an invitation is accepted', async () => {
    const { rows, service, user } = setUp();
    const invitation = await service.invite(OWNER, WS, user(OUTSIDER).email, 'member');
    for (let i = 4; i < 25; i += 1) {
      rows.members.push({ workspaceId: WS, userId: `filler-${i}`, role: 'viewer', createdAt: new Date() });
    }
    expect(await codeOf(service.acceptInvitation(user(OUTSIDER), invitation.id))).toBe('FEATURE_LIMIT_REACHED');
  });

  it('revokes only an invitation of this workspace (NOT_FOUND otherwise), admins only', async () => {
    const { rows, service } = setUp();
    rows.seedWorkspace('a0000000-0000-4000-8000-000000000002', OUTSIDER);
    const theirs = await service.invite(OUTSIDER, 'a0000000-0000-4000-8000-000000000002', 'x@example.com', 'member');
    expect(await codeOf(service.revokeInvitation(OWNER, WS, theirs.id))).toBe('NOT_FOUND');
    const ours = await service.invite(OWNER, WS, 'x@example.com', 'member');
    expect(await codeOf(service.revokeInvitation(MEMBER, WS, ours.id))).toBe('PERMISSION_DENIED');
    await expect(service.revokeInvitation(ADMIN, WS, ours.id)).resolves.toBeUndefined();
    expect(await codeOf(service.revokeInvitation(ADMIN, WS, ours.id))).toBe('NOT_FOUND');
  });
});

describe('WorkspacesService roles and owner checks', () => {
  it("changes roles (admins), never the owner's (ROLE_CHANGE_FORBIDDEN), not of a stranger (MEMBER_NOT_FOUND)", async () => {
    const { service } = setUp();
    await expect(service.changeRole(ADMIN, WS, VIEWER, 'member')).resolves.toMatchObject({
      userId: VIEWER,
      role: 'member',
    });
    expect(await codeOf(service.changeRole(MEMBER, WS, VIEWER, 'admin'))).toBe('PERMISSION_DENIED');
    expect(await codeOf(service.changeRole(ADMIN, WS, OWNER, 'member'))).toBe('ROLE_CHANGE_FORBIDDEN');
    expect(await codeOf(service.changeRole(ADMIN, WS, OUTSIDER, 'member'))).toBe('MEMBER_NOT_FOUND');
  });

  it('lets anyone leave, admins remove others, and nobody remove the owner', async () => {
    const { service } = setUp();
    expect(await codeOf(service.removeMember(MEMBER, WS, VIEWER))).toBe('PERMISSION_DENIED');
    await expect(service.removeMember(VIEWER, WS, VIEWER)).resolves.toBeUndefined();
    expect(await codeOf(service.get(VIEWER, WS))).toBe('WORKSPACE_NOT_FOUND');
    expect(await codeOf(service.removeMember(ADMIN, WS, OWNER))).toBe('ROLE_CHANGE_FORBIDDEN');
    expect(await codeOf(service.removeMember(OWNER, WS, OWNER))).toBe('ROLE_CHANGE_FORBIDDEN');
  });

  it('transfers ownership only from the owner, only to a member on the Team plan', async () => {
    const { rows, service } = setUp();
    expect(await codeOf(service.transferOwnership(ADMIN, WS, MEMBER))).toBe('PERMISSION_DENIED');
    expect(await codeOf(service.transferOwnership(OWNER, WS, OUTSIDER))).toBe('MEMBER_NOT_FOUND');
    rows.users.get(MEMBER)!.tier = 'pro';
    expect(await codeOf(service.transferOwnership(OWNER, WS, MEMBER))).toBe('WORKSPACE_REQUIRED');
    await expect(service.transferOwnership(OWNER, WS, ADMIN)).resolves.toMatchObject({ ownerId: ADMIN, role: 'admin' });
    await expect(service.get(OWNER, WS)).resolves.toMatchObject({ role: 'admin' });
    await expect(service.get(ADMIN, WS)).resolves.toMatchObject({ role: 'owner', ownerId: ADMIN });
  });
});
