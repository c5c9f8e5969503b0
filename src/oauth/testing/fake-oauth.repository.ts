import type { SiteEntity } from '../../vault/site.entity.js';
import type { WorkspaceMemberEntity } from '../../workspaces/workspace.entities.js';
import type { OAuthStateEntity } from '../oauth-state.entity.js';
import type { OAuthRepository } from '../oauth.repository.js';

type Used = 'insertState' | 'consumeState' | 'purgeExpiredStates' | 'findSite' | 'findMembership';

/** Pending authorizations, sites and memberships in memory; a state is consumed once, before it expires. */
export class FakeOAuthRepository implements Pick<OAuthRepository, Used> {
  readonly states = new Map<string, Omit<OAuthStateEntity, 'createdAt'>>();
  readonly sites = new Map<string, SiteEntity>();
  readonly memberships: WorkspaceMemberEntity[] = [];
  now = (): number => Date.now();

  async insertState(state: Omit<OAuthStateEntity, 'createdAt'>): Promise<void> {
    this.states.set(state.stateHash, { ...state });
  }

  async consumeState(stateHash: string): Promise<OAuthStateEntity | undefined> {
    const state = this.states.get(stateHash);
    if (state === undefined || state.usedAt !== null || state.expiresAt.getTime() <= this.now()) {
      return undefined;
    }
    state.usedAt = new Date(this.now());
    return { ...state, createdAt: new Date(this.now()) };
  }

  async purgeExpiredStates(): Promise<void> {
    for (const [hash, state] of this.states) {
      if (state.expiresAt.getTime() < this.now() - 24 * 3600_000) {
        this.states.delete(hash);
      }
    }
  }

  async findSite(id: string): Promise<SiteEntity | null> {
    return this.sites.get(id) ?? null;
  }

  async findMembership(workspaceId: string, userId: string): Promise<WorkspaceMemberEntity | null> {
    return this.memberships.find((m) => m.workspaceId === workspaceId && m.userId === userId) ?? null;
  }
}
