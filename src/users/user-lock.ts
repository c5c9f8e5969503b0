import type { EntityManager } from 'typeorm';
import { UserEntity } from './user.entity.js';

/**
 * Locks a user's row in `em`'s transaction and reads it: plan limits (sites, agents, workspaces) and
 * balances are checked and written under this lock, so concurrent requests of one user serialise.
 * The repositories of those features call it (they may not import the users repository); it is a
 * plain find with a row lock (SELECT … FOR UPDATE), no SQL of its own.
 */
export function lockUserRow(em: EntityManager, userId: string): Promise<UserEntity> {
  return em.getRepository(UserEntity).findOneOrFail({ where: { id: userId }, lock: { mode: 'pessimistic_write' } });
}
