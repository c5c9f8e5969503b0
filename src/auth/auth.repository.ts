import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { type DataSource, LessThan, type Repository } from 'typeorm';
import { CacheInvalidationBus } from '../common/cache/invalidation-bus.js';
import { type LocalCache } from '../common/cache/local-cache.js';
import { RowMapper } from '../common/database/row-mapper.js';
import { UserEntity } from '../users/user.entity.js';
import { RevokedTokenEntity } from './revoked-token.entity.js';
import { preparedStatement } from '../common/database/prepared-statement.js';

/** A token's user as the JWT check reads it, with the token's revocation. */
export interface TokenUser {
  /** Null when the token names no user. */
  user: UserEntity | null;
  revoked: boolean;
}

/** Users (and tokens) the process keeps at most; a user row is ~1 KB. */
const CACHED_USERS = 10_000;
const CACHED_TOKENS = 50_000;

/**
 * The SQL of sessions: revoked tokens through TypeORM, and the hot query every authenticated request
 * runs (the user and the token's revocation in one statement) as raw SQL through the row mapper. Its
 * answers are cached in the process (users by id, tokens' revocation by jti), dropped by the
 * `user:<id>` and `token:<jti>` notifications the tables' triggers send (see CacheInvalidationBus);
 * a `credits:<id>:<balance>` notification (the balance alone changed) sets the cached user's balance.
 */
@Injectable()
export class AuthRepository {
  private readonly users: RowMapper<UserEntity>;
  private readonly userQuery: string;
  private readonly cachedUsers: LocalCache<UserEntity>;
  private readonly cachedRevocations: LocalCache<boolean>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(RevokedTokenEntity) private readonly revoked: Repository<RevokedTokenEntity>,
    private readonly caches: CacheInvalidationBus,
  ) {
    this.cachedUsers = caches.cache('user', CACHED_USERS);
    this.cachedRevocations = caches.cache('token', CACHED_TOKENS);
    // `credits:<id>:<balance>`: a change of the balance alone, set on the cached user in place.
    caches.register({
      prefix: 'credits',
      drop: (rest) => this.balanceChanged(rest),
      clear: () => undefined,
    });
    // Every request runs this query (see RowMapper).
    this.users = new RowMapper(dataSource, UserEntity, 'u');
    this.userQuery =
      `SELECT ${this.users.select()}, EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = $2) AS revoked ` +
      'FROM users u WHERE u.id = $1';
  }

  /**
   * The user and whether the token is revoked: from the caches when both are there (no I/O), else one
   * query whose answer is cached. Callers must not change the returned row (it is shared).
   */
  tokenUser(id: string, jti: string): Promise<TokenUser> {
    const user = this.cachedUsers.get(id);
    const revoked = this.cachedRevocations.get(jti);
    if (user !== undefined && revoked !== undefined) {
      return Promise.resolve({ user, revoked });
    }
    return this.readTokenUser(id, jti);
  }

  /** `<id>:<balance>` from a `credits` notification: the cached user (shared, so copied) gets the balance. */
  private balanceChanged(rest: string): void {
    const colon = rest.indexOf(':');
    const balance = Number(rest.slice(colon + 1));
    if (colon <= 0 || !Number.isSafeInteger(balance)) {
      this.cachedUsers.drop(colon > 0 ? rest.slice(0, colon) : rest);
      return;
    }
    this.cachedUsers.update(rest.slice(0, colon), (user) =>
      Object.assign(Object.create(Object.getPrototypeOf(user) as object) as UserEntity, user, { credits: balance }),
    );
  }

  private async readTokenUser(id: string, jti: string): Promise<TokenUser> {
    // Taken before the query: a notification that arrives while it runs keeps its answer out of the cache.
    const userTicket = this.cachedUsers.ticket();
    const tokenTicket = this.cachedRevocations.ticket();
    const rows = (await this.dataSource.query(preparedStatement('auth_token_user', this.userQuery), [
      id,
      jti,
    ])) as Array<Record<string, unknown>>;
    const row = rows[0];
    if (row === undefined) {
      return { user: null, revoked: false };
    }
    const user = this.users.from(row);
    const revoked = row.revoked === true;
    if (user === null) {
      return { user, revoked };
    }
    this.cachedUsers.set(id, user, userTicket);
    this.cachedRevocations.set(jti, revoked, tokenTicket);
    return { user, revoked };
  }

  async revoke(token: { jti: string; userId: string; expiresAt: Date }): Promise<void> {
    await this.revoked.upsert(token, { conflictPaths: ['jti'] });
    this.caches.dropLocal('token', token.jti);
  }

  /** Removes the rows of tokens that expired anyway. */
  async purgeExpiredRevocations(): Promise<void> {
    await this.revoked.delete({ expiresAt: LessThan(new Date()) });
  }
}
