import type { EntityManager } from 'typeorm';
import { UserEntity } from './user.entity.js';

/**
 * Locks a user's row in `em`'s transaction and reads it: plan limits (sites, agents, workspaces) and
 * balances are checked and written under this lock, so concurrent requests of one user serialise.
 */
export function lockUserRow(em: EntityManager, userId: string): Promise<UserEntity> {
  return em
    .getRepository(UserEntity)
    .createQueryBuilder('u')
    .setLock('pessimistic_write')
    .where('u.id = :id', { id: userId })
    .getOneOrFail();
}
