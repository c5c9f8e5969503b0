import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { type DataSource, LessThan, type Repository } from 'typeorm';
import { RowMapper } from '../common/database/row-mapper.js';
import { UserEntity } from '../users/user.entity.js';
import { RevokedTokenEntity } from './revoked-token.entity.js';

/** A token's user as the JWT check reads it, with the token's revocation. */
export interface TokenUser {
  /** Null when the token names no user. */
  user: UserEntity | null;
  revoked: boolean;
}

/**
 * The SQL of sessions: revoked tokens through TypeORM, and the hot query every authenticated request
 * runs (the user and the token's revocation in one statement) as raw SQL through the row mapper.
 */
@Injectable()
export class AuthRepository {
  private readonly users: RowMapper<UserEntity>;
  private readonly userQuery: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(RevokedTokenEntity) private readonly revoked: Repository<RevokedTokenEntity>,
  ) {
    // Every request runs this query (see RowMapper).
    this.users = new RowMapper(dataSource, UserEntity, 'u');
    this.userQuery =
      `SELECT ${this.users.select()}, EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = $2) AS revoked ` +
      'FROM users u WHERE u.id = $1';
  }

  async tokenUser(id: string, jti: string): Promise<TokenUser> {
    const rows = (await this.dataSource.query(this.userQuery, [id, jti])) as Array<Record<string, unknown>>;
    const row = rows[0];
    return row === undefined
      ? { user: null, revoked: false }
      : { user: this.users.from(row), revoked: row.revoked === true };
  }

  async revoke(token: { jti: string; userId: string; expiresAt: Date }): Promise<void> {
    await this.revoked.upsert(token, { conflictPaths: ['jti'] });
  }

  /** Removes the rows of tokens that expired anyway. */
  async purgeExpiredRevocations(): Promise<void> {
    await this.revoked.delete({ expiresAt: LessThan(new Date()) });
  }
}
