import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { INTERNAL_ERROR_CODE } from '../common/error-filter.js';
import { currentRequestId } from '../common/log-context.js';
import { type Page, type PageQuery, pageOf } from '../common/pagination.js';
import type { WebhookDeliveryEntity } from './webhook-delivery.entity.js';
import { type DeliveryRecord, WebhooksRepository } from './webhooks.repository.js';

/**
 * Deliveries kept per agent: the newest, the rest deleted as each new one is recorded, so refused
 * deliveries (which anyone who knows the URL can send) cannot fill the database. A hundred cover a
 * sender's retries and a day of an ordinary integration; older runs stay on the agent's runs list.
 */
export const WEBHOOK_DELIVERIES_KEPT = 100;
/** Field names kept of one refusal, and the length of each: the names are the sender's keys. */
const MAX_FIELDS = 20;
const MAX_FIELD_LENGTH = 200;

export type DeliveryOutcome = 'accepted' | 'duplicate' | 'refused';

/** A delivery as the API answers it. */
export interface WebhookDeliveryView {
  id: string;
  receivedAt: string;
  outcome: DeliveryOutcome;
  statusCode: number;
  code: string | null;
  fields: string[];
  requestId: string | null;
  runId: string | null;
}

function toView(row: WebhookDeliveryEntity): WebhookDeliveryView {
  return {
    id: row.id,
    receivedAt: row.createdAt.toISOString(),
    outcome: row.code !== null ? 'refused' : row.duplicate ? 'duplicate' : 'accepted',
    statusCode: row.statusCode,
    code: row.code,
    fields: row.fields,
    requestId: row.requestId,
    runId: row.runId,
  };
}

/** The names of the fields a refusal names (never their values or messages), bounded, without NUL. */
function fieldNames(err: AppError): string[] {
  const names = (err.details ?? []).map((d) => d.field.replaceAll('\u0000', '').slice(0, MAX_FIELD_LENGTH));
  return [...new Set(names)].slice(0, MAX_FIELDS);
}

/**
 * The record of an agent's webhook deliveries, accepted and refused: when, the answer's status and
 * code, the failing field names, the request id, the run. Never the secret, the headers or a refused
 * payload (an accepted one is in its run).
 */
@Injectable()
export class WebhookDeliveriesService {
  private readonly logger = new Logger(WebhookDeliveriesService.name);

  constructor(private readonly repository: WebhooksRepository) {}

  /**
   * Records an accepted delivery without holding up its answer: the run is queued already, and a
   * failure to record it is logged (ids only), never answered.
   */
  accepted(agentId: string, runId: string, duplicate: boolean): Promise<void> {
    return this.write({ agentId, statusCode: 202, code: null, fields: [], runId, duplicate });
  }

  /** Records a refusal (awaited: a refused sender may wait); a failure to record it is only logged. */
  refused(agentId: string, err: unknown): Promise<void> {
    const refusal = err instanceof AppError ? err : undefined;
    return this.write({
      agentId,
      statusCode: refusal?.statusCode ?? 500,
      code: refusal?.code ?? INTERNAL_ERROR_CODE,
      fields: refusal === undefined ? [] : fieldNames(refusal),
      runId: null,
      duplicate: false,
    });
  }

  async list(agentId: string, query: PageQuery): Promise<Page<WebhookDeliveryView>> {
    return pageOf(await this.repository.listForAgent(agentId, query), query.limit, toView);
  }

  private async write(row: Omit<DeliveryRecord, 'requestId'>): Promise<void> {
    try {
      await this.repository.record({ ...row, requestId: currentRequestId() ?? null }, WEBHOOK_DELIVERIES_KEPT);
    } catch (err) {
      this.logger.warn(
        `webhook delivery of agent ${row.agentId} (${row.statusCode}) not recorded: ${(err as Error).name}`,
      );
    }
  }
}
