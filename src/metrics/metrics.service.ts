import { Inject, Injectable, Optional } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { SETTINGS } from '../config/settings.module.js';
import { DEFAULT_METRICS_DOMAIN_LABELS, type Settings } from '../config/settings.js';
import type { RunFinalStatus, RunTrigger } from '../../workflows/contracts.js';

/** Seconds: from a fast API answer to a slow page of a list. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a tool call is bounded by its 30 s timeout. */
const TOOL_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: a run is a few model turns, or hours when it waits out rate limits on durable timers. */
const RUN_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600];

/** The label of every site domain past the first METRICS_DOMAIN_LABELS a process has seen (no host is spelled so). */
export const OTHER_DOMAIN = '(other)';

/**
 * The service's own metrics (Prometheus, prom-client), one registry per process: the API and the
 * worker each expose theirs (GET /api/metrics; the worker's WORKER_HTTP_PORT), and a counter counts
 * what happened in its own process, so Prometheus sums a metric over the instances it scrapes. Labels
 * take few values: route templates (never raw paths), run triggers, error codes, site domains.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'agentsite_http_request_duration_seconds',
    help: 'HTTP requests of the API by route template (`(none)`: no route matched) and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'agentsite_webhook_deliveries_total',
    help: 'Webhook deliveries: accepted (202, code `none`) or refused, with the error code of the answer',
    labelNames: ['outcome', 'code'] as const,
    registers: [this.registry],
  });

  readonly notifications = new Counter({
    name: 'agentsite_notifications_total',
    help: "Attempts to send an agent's notifications (the worker), by event and outcome: delivered, failed (retried), or not sent (agent_gone, run_gone, notify_removed, event_not_listed)",
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly paymentEvents = new Counter({
    name: 'agentsite_payment_events_total',
    help: "The payment provider's webhook events: applied, duplicate (applied before) or refused (with the answer's error code)",
    labelNames: ['type', 'outcome', 'code'] as const,
    registers: [this.registry],
  });

  readonly creditPurchases = new Counter({
    name: 'agentsite_credit_purchases_total',
    help: 'Credit purchases as they settle: succeeded or failed (by the API answer, an event or a look-up), or left pending',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly runsQueued = new Counter({
    name: 'agentsite_runs_queued_total',
    help: 'Runs queued, by trigger (manual, webhook: the API; schedule: the worker)',
    labelNames: ['trigger'] as const,
    registers: [this.registry],
  });

  readonly scheduledRunsSkipped = new Counter({
    name: 'agentsite_scheduled_runs_skipped_total',
    help:
      'Schedule firings that ran nothing, by reason: busy (the agent had a run queued or active, seen by ' +
      "the firing or by the agent's queue), no_credits, not_scheduled",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly runsStarted = new Counter({
    name: 'agentsite_runs_started_total',
    help: 'Runs that began their first model turn, by trigger',
    labelNames: ['trigger'] as const,
    registers: [this.registry],
  });

  readonly runsEnded = new Counter({
    name: 'agentsite_runs_ended_total',
    help: 'Runs that ended, by trigger and status (completed, failed, cancelled)',
    labelNames: ['trigger', 'status'] as const,
    registers: [this.registry],
  });

  readonly runsReconciled = new Counter({
    name: 'agentsite_runs_reconciled_total',
    help: 'Runs the run reconciler put right after their Temporal execution ended without doing so, by outcome: failed (left queued or active, e.g. terminated by an operator; ended as failed), archived (ended without an archive; archived from its history), unavailable (its history was gone; archived saying so)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly runDuration = new Histogram({
    name: 'agentsite_run_duration_seconds',
    help: 'From the start of a run to its end, by trigger and status (runs that never started are not observed)',
    labelNames: ['trigger', 'status'] as const,
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  readonly toolCallDuration = new Histogram({
    name: 'agentsite_tool_call_duration_seconds',
    help: 'Tool calls to sites by domain and outcome (`ok`, or how it failed)',
    labelNames: ['domain', 'outcome'] as const,
    buckets: TOOL_BUCKETS,
    registers: [this.registry],
  });

  readonly modelTokens = new Counter({
    name: 'agentsite_model_tokens_total',
    help: 'Model tokens used (runs and chat), by type (input, output)',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly outgoingLimited = new Counter({
    name: 'agentsite_outgoing_limited_total',
    help: 'Tool calls refused by the outgoing limit before they were sent, by site domain',
    labelNames: ['domain'] as const,
    registers: [this.registry],
  });

  /** The domains labelled by name, in the order first seen (at most `maxDomains`). */
  private readonly domains = new Set<string>();
  private readonly maxDomains: number;

  constructor(@Optional() @Inject(SETTINGS) settings?: Pick<Settings, 'metricsDomainLabels'>) {
    this.maxDomains = settings?.metricsDomainLabels ?? DEFAULT_METRICS_DOMAIN_LABELS;
    // process_* and nodejs_* (CPU, memory, event loop lag, handles): the usual health of a Node process.
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * The `domain` label of a site domain: its name for the first `METRICS_DOMAIN_LABELS` domains this
   * process sees, then `(other)`. Manifests come from anyone, so their domains would otherwise make the
   * series (and the scrapers' memory) grow without bound.
   */
  domainLabel(domain: string): string {
    if (this.domains.has(domain)) {
      return domain;
    }
    if (this.domains.size >= this.maxDomains) {
      return OTHER_DOMAIN;
    }
    this.domains.add(domain);
    return domain;
  }

  /** A run that has just moved from queued to active. */
  runStarted(trigger: RunTrigger): void {
    this.runsStarted.inc({ trigger });
  }

  /** A run whose row has just been marked ended; `startedAt` null when it never started. */
  runEnded(trigger: RunTrigger, status: RunFinalStatus, startedAt: Date | null, endedAt: Date): void {
    this.runsEnded.inc({ trigger, status });
    if (startedAt !== null) {
      this.runDuration.observe({ trigger, status }, Math.max(0, (endedAt.getTime() - startedAt.getTime()) / 1000));
    }
  }

  modelUsage(usage: { inputTokens: number; outputTokens: number }): void {
    this.modelTokens.inc({ type: 'input' }, usage.inputTokens);
    this.modelTokens.inc({ type: 'output' }, usage.outputTokens);
  }

  /** The exposition (Prometheus text format 0.0.4). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
