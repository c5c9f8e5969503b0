import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { ApiRequest } from '../common/http.js';
import type { AuthUser } from '../auth/auth-user.js';
import { type Scope, WORKSPACE_HEADER } from './scope.js';
import { ScopeResolver } from './scope-resolver.js';

/**
 * Resolves X-Workspace-Id into the request's scope (ScopeResolver): WORKSPACE_NOT_FOUND for a workspace the caller is
 * not a member of (whether or not it exists), WORKSPACE_REQUIRED when its owner is no longer on Team.
 */
@Injectable()
export class WorkspaceScopeGuard implements CanActivate {
  constructor(private readonly scopes: ScopeResolver) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const req = context.switchToHttp().getRequest<ApiRequest & { user?: AuthUser; scope?: Scope }>();
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

  private async workspaceScope(req: ApiRequest & { scope?: Scope }, user: AuthUser, id: string): Promise<boolean> {
    req.scope = await this.scopes.scopeOf(user.user, id);
    return true;
  }
}
