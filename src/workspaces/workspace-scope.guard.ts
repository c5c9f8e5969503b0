import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { type DataSource } from 'typeorm';
import type { AuthUser } from '../auth/auth-user.js';
import { limitsOf } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { UserEntity } from '../users/user.entity.js';
import { type Scope, WORKSPACE_HEADER } from './scope.js';
import { WorkspaceMemberEntity } from './workspace.entities.js';
import { UUID } from '../common/ids.js';

/**
 * Resolves X-Workspace-Id into the request's scope: WORKSPACE_NOT_FOUND for a workspace the caller is
 * not a member of (whether or not it exists), WORKSPACE_REQUIRED when its owner is no longer on Team.
 */
@Injectable()
export class WorkspaceScopeGuard implements CanActivate {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & { user?: AuthUser; scope?: Scope }>();
    if (req.user === undefined) {
      return true;
    }
    const header = req.headers[WORKSPACE_HEADER];
    if (header === undefined || header === '') {
      req.scope = { user: req.user.user, workspace: null };
      return true;
    }
    const id = Array.isArray(header) ? header[0]! : header;
    const membership = UUID.test(id)
      ? await this.dataSource
          .getRepository(WorkspaceMemberEntity)
          .findOneBy({ workspaceId: id, userId: req.user.user.id })
      : null;
    if (membership === null) {
      throw new AppError('WORKSPACE_NOT_FOUND', 'No workspace with this id');
    }
    const owner = await this.dataSource
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin('workspaces', 'w', 'w.owner_id = u.id')
      .where('w.id = :id', { id })
      .getOneOrFail();
    if (limitsOf(owner).workspaces === 0) {
      throw new AppError('WORKSPACE_REQUIRED', "This workspace's owner is no longer on the Team plan");
    }
    req.scope = { user: req.user.user, workspace: { id, role: membership.role, owner } };
    return true;
  }
}
