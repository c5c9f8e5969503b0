import { Injectable } from '@nestjs/common';
import { AgentsService, secretMatches } from '../agents/agents.service.js';
import { requireFeature } from '../billing/tiers.js';
import { AppError } from '../common/app-error.js';
import { RunEnqueueService } from '../runs/run-enqueue.service.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { validatePayload } from './webhook-payload.js';
import { webhookAction } from '../../workflows/contracts.js';

export interface WebhookAccepted {
  runId: string;
  status: 'queued';
  queuePosition: number;
  duplicate?: boolean;
}

/** One webhook delivery as it came in (the route reads the headers and the body, nothing more). */
export interface WebhookDelivery {
  agentId: string;
  secret: string | undefined;
  deliveryId: string | undefined;
  /** Whether the request's Content-Type is JSON. */
  isJson: boolean;
  body: unknown;
}

const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,200}$/;

type WebhookTarget = NonNullable<Awaited<ReturnType<AgentsService['webhookTarget']>>>;

/** The intake rules of a webhook delivery, in the order the specification answers them. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly agents: AgentsService,
    private readonly enqueuer: RunEnqueueService,
    private readonly deliveries: WebhookDeliveriesService,
  ) {}

  /**
   * Answers a delivery, and records it for the agent's owner when the agent exists: an accepted one
   * after it is queued (not waited for), a refused one before its answer. An unknown agent records
   * nothing.
   */
  async trigger(delivery: WebhookDelivery): Promise<WebhookAccepted> {
    const target = await this.agents.webhookTarget(delivery.agentId);
    if (target === null || target.agent.triggerType !== 'webhook') {
      throw new AppError('AGENT_NOT_FOUND', 'No webhook agent with this id');
    }
    let accepted: WebhookAccepted;
    try {
      accepted = await this.accept(target, delivery);
    } catch (err) {
      await this.deliveries.refused(target.agent.id, err);
      throw err;
    }
    void this.deliveries.accepted(target.agent.id, accepted.runId, accepted.duplicate === true);
    return accepted;
  }

  private async accept(
    { agent, tierOwner, payerCredits }: WebhookTarget,
    { secret, deliveryId, isJson, body }: WebhookDelivery,
  ): Promise<WebhookAccepted> {
    if (!secretMatches(secret, agent.webhookSecretHash)) {
      throw new AppError('WEBHOOK_SECRET_INVALID', 'X-Webhook-Secret is missing or does not match');
    }
    // The tier that counts: the workspace owner's for a workspace agent, else the agent owner's.
    requireFeature(tierOwner, (l) => l.webhookAgents, 'Webhook triggers (harness tier or higher)');
    if (!isJson) {
      throw new AppError('WEBHOOK_PAYLOAD_INVALID', 'Content-Type must be application/json', [
        { field: 'content-type', message: 'must be application/json' },
      ]);
    }
    if (deliveryId !== undefined && !DELIVERY_ID.test(deliveryId)) {
      throw AppError.validation([
        { field: 'X-Webhook-Delivery-Id', message: 'must be 1-200 characters of A-Z a-z 0-9 . _ : -' },
      ]);
    }
    const payload = validatePayload(agent.webhookSchema ?? [], body);
    if (payerCredits <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const action = agent.allowActionOverride ? webhookAction(payload) : null;
    const { run, queuePosition, duplicate } = await this.enqueuer.enqueueWebhook(agent, {
      payload,
      actionOverride: action,
      deliveryId: deliveryId ?? null,
    });
    return { runId: run.id, status: 'queued', queuePosition, ...(duplicate ? { duplicate } : {}) };
  }
}
