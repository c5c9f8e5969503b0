import { Injectable } from '@nestjs/common';
import { limitsOf } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import type { UserEntity } from '../users/user.entity.js';
import type { Scope } from './scope.js';
import { WorkspacesRepository } from './workspaces.repository.js';

/**
 * A user's scope in a workspace (null: personal), membership and role read now: WORKSPACE_NOT_FOUND
 * for a workspace the user is not a member of (whether or not it exists), WORKSPACE_REQUIRED when its
 * owner is no longer on Team. What WorkspaceScopeGuard makes of X-Workspace-Id, and the MCP endpoint
 * of its callers' grants, on every request.
 */
@Injectable()
export class ScopeResolver {
  constructor(private readonly workspaces: WorkspacesRepository) {}

  async scopeOf(user: UserEntity, id: string | null): Promise<Scope> {
    if (id === null) {
      return { user, workspace: null };
    }
    const membership = UUID.test(id) ? await this.workspaces.findMembership(id, user.id) : null;
    if (membership === null) {
      throw new AppError('WORKSPACE_NOT_FOUND', 'No workspace with this id');
    }
    const owner = await this.workspaces.findOwner(id);
    if (limitsOf(owner).workspaces === 0) {
      throw new AppError('WORKSPACE_REQUIRED', "This workspace's owner is no longer on the Team plan");
    }
    return { user, workspace: { id, role: membership.role, owner } };
  }
}
