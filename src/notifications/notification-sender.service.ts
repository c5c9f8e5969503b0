import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NotificationOutcome, NotificationSkip, NotificationsPort } from '../../activities/notify.js';
import { NotificationNotDelivered } from '../../activities/notify.js';
import type { NotificationInput } from '../../workflows/contracts.js';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import type { Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RunsService } from '../runs/runs.service.js';
import { SiteHttpClient, SiteNetworkError } from '../sites/site-http.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import { notificationBody } from './notification-body.js';
import { standardWebhookHeaders } from './notification-signature.js';
import { NotificationsRepository, type NotificationSource } from './notifications.repository.js';
import { openNotifySecret } from '../agents/notify-secret.js';

/** A notification's POST waits this long for the receiver's answer. */
export const NOTIFICATION_TIMEOUT_MS = 10_000;
/** The notification workflow's schedule (its retry policy): the wait after the first failure, and the cap. */
export const NOTIFICATION_RETRY = { initialSeconds: 10, backoff: 2, maxSeconds: 3600 } as const;
/**
 * How long a run_completed waits for its run's output: read from the queue's history, or from the
 * archive that a queue execution begun before 'archive-at-handover' writes right after the run.
 */
const ARCHIVE_WAIT_MS = 5_000;
const ARCHIVE_POLL_MS = 200;

type Settled = NotificationSource & { run: NonNullable<NotificationSource['run']> };

/**
 * The worker's notifications port: one attempt of one notification. Reads the agent (its notify URL,
 * events and sealed secret), the run and the approval again on every attempt, builds the body, signs
 * it as Standard Webhooks do and POSTs it through the sites' guarded client (HTTPS only, no private
 * or metadata address unless allow-listed, SITE_CA_CERTS trusted), redirects not followed. 2xx:
 * delivered; anything else throws NotificationNotDelivered (retried). Its log lines carry ids, the
 * event, the status and the attempt: never the URL, the secret or a body.
 */
@Injectable()
export class NotificationSenderService implements NotificationsPort {
  private readonly logger = new Logger('Notifications');

  constructor(
    private readonly repository: NotificationsRepository,
    private readonly http: SiteHttpClient,
    private readonly cipher: VaultCipher,
    private readonly metrics: MetricsService,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly runs: RunsService,
  ) {}

  async send(input: NotificationInput, attempt: number): Promise<NotificationOutcome> {
    const ids = `notification ${input.messageId} (${input.event}, agent ${input.agentId}, run ${input.runId}, attempt ${attempt})`;
    const source = await this.read(input);
    const skip = skipped(input, source);
    if (skip !== undefined) {
      this.logger.log(`${ids}: not sent (${skip})`);
      this.metrics.notifications.inc({ event: input.event, outcome: skip });
      return { sent: false, reason: skip };
    }
    const ready = source as Settled & { agent: { notifyUrl: string; notifySecret: string } };
    const body = JSON.stringify(notificationBody(input.event, ready, this.settings.publicBaseUrl, new Date()));
    const secret = openNotifySecret(this.cipher, ready.agent.id, ready.agent.notifySecret);
    const headers = standardWebhookHeaders(secret, input.messageId, Math.floor(Date.now() / 1000), body);
    let status: number;
    try {
      const answer = await this.http.request({
        method: 'POST',
        url: ready.agent.notifyUrl,
        headers: { 'content-type': 'application/json', ...headers },
        body,
        timeoutMs: NOTIFICATION_TIMEOUT_MS,
        redirect: 'manual',
      });
      status = answer.status;
    } catch (err) {
      const why = failureOf(err);
      this.logger.warn(`${ids}: not delivered (${why})`);
      this.metrics.notifications.inc({ event: input.event, outcome: 'failed' });
      throw new NotificationNotDelivered(`not delivered: ${why}`, undefined, this.nextRetrySeconds(attempt));
    }
    if (status < 200 || status > 299) {
      this.logger.warn(`${ids}: the receiver answered ${status}`);
      this.metrics.notifications.inc({ event: input.event, outcome: 'failed' });
      throw new NotificationNotDelivered(`the receiver answered ${status}`, status, this.nextRetrySeconds(attempt));
    }
    this.logger.log(`${ids}: delivered (${status})`);
    this.metrics.notifications.inc({ event: input.event, outcome: 'delivered' });
    return { sent: true, status };
  }

  /**
   * The rows; for run_completed, the run's output: from its archive, else from its queue's history (the
   * queue archives the runs an execution ran when it hands over, minutes later), else waited for.
   */
  private async read(input: NotificationInput): Promise<NotificationSource | null> {
    const deadline = Date.now() + ARCHIVE_WAIT_MS;
    for (let tries = 0; ; tries += 1) {
      const source = await this.repository.source(input.agentId, input.runId, input.approvalId);
      const waiting = input.event === 'run_completed' && source?.run !== null && source?.run.lastEntry === null;
      if (!waiting || Date.now() >= deadline) {
        return source;
      }
      const output = tries === 0 ? await this.runs.outputOf(input.runId) : undefined;
      if (output !== undefined) {
        return { ...source!, run: { ...source!.run!, lastEntry: { type: 'completed', output } } };
      }
      await new Promise((resolve) => setTimeout(resolve, ARCHIVE_POLL_MS));
    }
  }

  /**
   * The wait before the next attempt when NOTIFICATION_RETRY_INITIAL_SECONDS shortens the schedule
   * (tests); undefined: the workflow's retry policy decides (10 s, doubling, at most an hour).
   */
  private nextRetrySeconds(attempt: number): number | undefined {
    const initial = this.settings.notificationRetryInitialSeconds;
    if (initial === NOTIFICATION_RETRY.initialSeconds) {
      return undefined;
    }
    return Math.min(initial * NOTIFICATION_RETRY.backoff ** (attempt - 1), NOTIFICATION_RETRY.maxSeconds);
  }
}

/** Why nothing is sent: the agent (or the run) is gone, its notify removed, or the event no longer listed. */
function skipped(input: NotificationInput, source: NotificationSource | null): NotificationSkip | undefined {
  if (source === null) {
    return 'agent_gone';
  }
  if (source.run === null) {
    return 'run_gone';
  }
  if (source.agent.notifyUrl === null || source.agent.notifySecret === null) {
    return 'notify_removed';
  }
  if (source.agent.notifyEvents?.includes(input.event) !== true) {
    return 'event_not_listed';
  }
  return undefined;
}

/** A failed request, told without the URL's path or query (the host at most) and without any body. */
function failureOf(err: unknown): string {
  if (err instanceof AppError) {
    return `refused: ${err.message}`;
  }
  if (err instanceof SiteNetworkError) {
    return `${err.kind}: ${err.message}`;
  }
  return err instanceof Error ? err.name : 'unknown error';
}
