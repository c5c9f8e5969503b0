import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { type PageQuery, keysetWhere } from '../common/pagination.js';
import { preparedStatement } from '../common/database/prepared-statement.js';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.js';

/** What is kept of one delivery (the row's columns the feature writes). */
export interface DeliveryRecord {
  agentId: string;
  statusCode: number;
  code: string | null;
  fields: string[];
  requestId: string | null;
  runId: string | null;
  duplicate: boolean;
}

/**
 * The insert of a delivery, which also deletes the agent's rows beyond the newest `$8` (the new row
 * is not among the rows the statement sees: it keeps `$8 - 1` of them). One statement, one round trip.
 */
const RECORD_QUERY =
  'WITH cut AS (SELECT created_at, id FROM webhook_deliveries WHERE agent_id = $1 ' +
  'ORDER BY created_at DESC, id DESC OFFSET $8 - 1 LIMIT 1), ' +
  'pruned AS (DELETE FROM webhook_deliveries d USING cut WHERE d.agent_id = $1 ' +
  'AND (d.created_at, d.id) <= (cut.created_at, cut.id)) ' +
  'INSERT INTO webhook_deliveries (agent_id, status_code, code, fields, request_id, run_id, duplicate) ' +
  'VALUES ($1, $2, $3, $4::text[], $5, $6, $7)';

/** The SQL of `webhook_deliveries`: the bounded record of each agent's deliveries, and its list. */
@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Records a delivery and keeps only the agent's newest `kept`. */
  async record(row: DeliveryRecord, kept: number): Promise<void> {
    await this.dataSource.query(preparedStatement('webhook_deliveries_record', RECORD_QUERY), [
      row.agentId,
      row.statusCode,
      row.code,
      row.fields,
      row.requestId,
      row.runId,
      row.duplicate,
      kept,
    ]);
  }

  /** The agent's deliveries, newest first, `limit + 1` of them (see pageOf). */
  listForAgent(agentId: string, query: PageQuery): Promise<WebhookDeliveryEntity[]> {
    const qb = this.dataSource
      .getRepository(WebhookDeliveryEntity)
      .createQueryBuilder('d')
      .where('d.agent_id = :agentId', { agentId })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.id', 'DESC');
    keysetWhere(qb, 'd', query.cursor, 'DESC');
    return qb.take(query.limit + 1).getMany();
  }
}
