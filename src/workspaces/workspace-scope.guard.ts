import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { limitsOf } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { type Scope, WORKSPACE_HEADER } from './scope.js';
import { WorkspacesRepository } from './workspaces.repository.js';
import { UUID } from '../common/ids.js';

/**
 * Resolves X-Workspace-Id into the request's scope: WORKSPACE_NOT_FOUND for a workspace the caller is
 * not a member of (whether or not it exists), WORKSPACE_REQUIRED when its owner is no longer on Team.
 */
@Injectable()
export class WorkspaceScopeGuard implements CanActivate {
  constructor(private readonly workspaces: WorkspacesRepository) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & { user?: AuthUser; scope?: Scope }>();
    if (req.user === undefined) {
      return true;
    }
    const header = req.headers[WORKSPACE_HEADER];
    if (header === undefined || header === '') {
      // Most requests: the personal scope, answered without a promise.
      req.scope = { user: req.user.user, workspace: null };
      return true;
    }
    return this.workspaceScope(req, req.user, Array.isArray(header) ? header[0]! : header);
  }

  private async workspaceScope(req: Request & { scope?: Scope }, user: AuthUser, id: string): Promise<boolean> {
    const membership = UUID.test(id) ? await this.workspaces.findMembership(id, user.user.id) : null;
    if (membership === null) {
      throw new AppError('WORKSPACE_NOT_FOUND', 'No workspace with this id');
    }
    const owner = await this.workspaces.findOwner(id);
    if (limitsOf(owner).workspaces === 0) {
      throw new AppError('WORKSPACE_REQUIRED', "This workspace's owner is no longer on the Team plan");
    }
    req.scope = { user: user.user, workspace: { id, role: membership.role, owner } };
    return true;
  }
}
