import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type DeepPartial } from 'typeorm';
import { RowMapper } from '../common/database/row-mapper.js';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { UserEntity } from '../users/user.entity.js';
import { SiteEntity } from '../vault/site.entity.js';
import { type Scope, scopeSql, scopeWhere } from '../workspaces/scope.js';
import { AgentEntity } from './agent.entity.js';
import { lockUserRow } from '../users/user-lock.js';
import { preparedStatement } from '../common/database/prepared-statement.js';

/** A webhook's target as its one query reads it (see AgentsRepository.webhookTarget). */
export interface WebhookTarget {
  agent: AgentEntity;
  tierOwner: UserEntity;
  payerCredits: number;
}

/** What a new agent's transaction offers (see AgentsRepository.createLocked). */
export interface AgentCreation {
  /** The limits owner, locked until the transaction ends. */
  owner: UserEntity;
  /** How many agents the scope has. */
  count(): Promise<number>;
  save(row: DeepPartial<AgentEntity>): Promise<AgentEntity>;
}

/**
 * The SQL of `agents`: TypeORM for the ordinary reads and writes, raw SQL through the row mapper for
 * the webhook's hot read (the agent, its tier owner and its payer's balance in one statement).
 */
@Injectable()
export class AgentsRepository {
  private readonly agentRows: RowMapper<AgentEntity>;
  private readonly ownerRows: RowMapper<UserEntity>;
  private readonly webhookQuery: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.agentRows = new RowMapper(dataSource, AgentEntity, 'a');
    this.ownerRows = new RowMapper(dataSource, UserEntity, 'o');
    this.webhookQuery =
      `SELECT ${this.agentRows.select()}, ${this.ownerRows.select()}, payer.credits AS payer_credits ` +
      'FROM agents a LEFT JOIN workspaces w ON w.id = a.workspace_id ' +
      'JOIN users o ON o.id = COALESCE(w.owner_id, a.user_id) JOIN users payer ON payer.id = a.user_id ' +
      'WHERE a.id = $1';
  }

  private get agents() {
    return this.dataSource.getRepository(AgentEntity);
  }

  /** One round trip; null for an unknown agent. `agentId` must be a UUID (the caller checks). */
  async webhookTarget(agentId: string): Promise<WebhookTarget | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement('agents_webhook_target', this.webhookQuery),
      [agentId],
    );
    const row = rows[0];
    if (row === undefined) {
      return null;
    }
    return {
      agent: this.agentRows.from(row)!,
      tierOwner: this.ownerRows.from(row)!,
      payerCredits: Number(row.payer_credits),
    };
  }

  findInScope(scope: Scope, agentId: string): Promise<AgentEntity | null> {
    return this.agents.findOneBy({ id: agentId, ...scopeWhere(scope) });
  }

  /** One page of the scope's agents in creation order, with one row more than asked. */
  page(scope: Scope, query: PageQuery): Promise<AgentEntity[]> {
    const [where, params] = scopeSql(scope, 'a');
    const qb = this.agents
      .createQueryBuilder('a')
      .where(where, params)
      .orderBy('a.created_at', 'ASC')
      .addOrderBy('a.id', 'ASC');
    keysetWhere(qb, 'a', query.cursor);
    return qb.take(query.limit + 1).getMany();
  }

  /** The scope's sites among `ids` (a vault read the agent's site list is checked against). */
  sitesInScope(scope: Scope, ids: string[]): Promise<SiteEntity[]> {
    return this.dataSource.getRepository(SiteEntity).findBy({ id: In(ids), ...scopeWhere(scope) });
  }

  async save(agent: AgentEntity): Promise<void> {
    await this.agents.save(agent);
  }

  /** Saves the agent and runs `then` in the same transaction (a failure of `then` undoes the save). */
  async saveAnd(agent: AgentEntity, then: () => Promise<void>): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      await em.getRepository(AgentEntity).save(agent);
      await then();
    });
  }

  /**
   * A new agent in one transaction, serialised per limits owner (a row lock on that user) so that a
   * limit holds under concurrent requests: `work` checks, counts and saves through the handle.
   */
  createLocked<T>(limitsUserId: string, scope: Scope, work: (tx: AgentCreation) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (em) => {
      const owner = await lockUserRow(em, limitsUserId);
      const agents = em.getRepository(AgentEntity);
      return work({
        owner,
        count: () => agents.countBy(scopeWhere(scope)),
        save: (row) => agents.save(agents.create(row)),
      });
    });
  }

  async setSecretHash(agentId: string, webhookSecretHash: string | null): Promise<void> {
    await this.agents.update({ id: agentId }, { webhookSecretHash });
  }

  async setNotifySecret(agentId: string, notifySecret: string): Promise<void> {
    await this.agents.update({ id: agentId }, { notifySecret });
  }

  async delete(agentId: string): Promise<void> {
    await this.agents.delete({ id: agentId });
  }
}
