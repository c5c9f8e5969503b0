import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { IsNull } from 'typeorm';
import { AppError } from '../common/app-error.js';
import type { UserEntity } from '../users/user.entity.js';
import type { WorkspaceRole } from './workspace.entities.js';

/**
 * Whose resources a request acts on: the caller's own (personal), or a Team workspace's
 * (`X-Workspace-Id`), with the caller's role there.
 */
export interface Scope {
  user: UserEntity;
  workspace: { id: string; role: WorkspaceRole; owner: UserEntity } | null;
}

export const WORKSPACE_HEADER = 'x-workspace-id';

const RANK: Record<WorkspaceRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** PERMISSION_DENIED unless the caller's workspace role is at least `minimum` (personal scope: always allowed). */
export function requireRole(scope: Scope, minimum: WorkspaceRole, action: string): void {
  if (scope.workspace !== null && RANK[scope.workspace.role] < RANK[minimum]) {
    throw new AppError(
      'PERMISSION_DENIED',
      `${action} needs the ${minimum} role in this workspace (you are ${scope.workspace.role})`,
    );
  }
}

export function roleAtLeast(role: WorkspaceRole, minimum: WorkspaceRole): boolean {
  return RANK[role] >= RANK[minimum];
}

/** The scope's workspace, or WORKSPACE_REQUIRED (sharing and other workspace-only operations). */
export function requireWorkspace(scope: Scope): NonNullable<Scope['workspace']> {
  if (scope.workspace === null) {
    throw new AppError('WORKSPACE_REQUIRED', 'This needs X-Workspace-Id naming a Team workspace');
  }
  return scope.workspace;
}

/** The user whose tier sets the limits: the caller, or the workspace's owner. */
export function limitsUser(scope: Scope): UserEntity {
  return scope.workspace?.owner ?? scope.user;
}

/** TypeORM `where` for rows of this scope (tables with user_id and workspace_id). */
export function scopeWhere(
  scope: Scope,
): { workspaceId: string } | { userId: string; workspaceId: ReturnType<typeof IsNull> } {
  return scope.workspace !== null
    ? { workspaceId: scope.workspace.id }
    : { userId: scope.user.id, workspaceId: IsNull() };
}

/** SQL condition for rows of this scope, with parameters, for query builders. */
export function scopeSql(scope: Scope, alias: string): [string, Record<string, string>] {
  return scope.workspace !== null
    ? [`${alias}.workspace_id = :scopeWorkspace`, { scopeWorkspace: scope.workspace.id }]
    : [`${alias}.user_id = :scopeUser AND ${alias}.workspace_id IS NULL`, { scopeUser: scope.user.id }];
}

/** Whether a row in hand (user_id and workspace_id) is of this scope: scopeSql's condition in code. */
export function inScope(scope: Scope, row: { userId: string; workspaceId: string | null }): boolean {
  return scope.workspace !== null
    ? row.workspaceId === scope.workspace.id
    : row.userId === scope.user.id && row.workspaceId === null;
}

/**
 * SQL: the site `site` belongs to the vault of the row `owner` (an agent or a chat session with
 * user_id and workspace_id): its workspace's vault, or its user's personal one.
 */
export function inOwnersVaultSql(site: string, owner: string): string {
  return (
    `(CASE WHEN ${owner}.workspace_id IS NULL THEN ${site}.user_id = ${owner}.user_id AND ${site}.workspace_id IS NULL ` +
    `ELSE ${site}.workspace_id = ${owner}.workspace_id END)`
  );
}

/** A programming error: @CurrentScope() on a route that no guard gave a scope (a @Public() one). */
export class MissingScopeError extends Error {
  override readonly name = 'MissingScopeError';

  constructor() {
    super('CurrentScope used on a route without authentication');
  }
}

/** The request's scope (set by WorkspaceScopeGuard). */
export const CurrentScope = createParamDecorator((_data: unknown, ctx: ExecutionContext): Scope => {
  const req = ctx.switchToHttp().getRequest<{ scope?: Scope }>();
  if (req.scope === undefined) {
    throw new MissingScopeError();
  }
  return req.scope;
});
