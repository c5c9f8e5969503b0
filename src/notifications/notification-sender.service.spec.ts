import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { NotificationNotDelivered } from '../../activities/notify.js';
import type { NotificationInput } from '../../workflows/contracts.js';
import { AppError } from '../common/app-error.js';
import type { Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { RunsService } from '../runs/runs.service.js';
import type { SiteHttpClient, SiteRequest } from '../sites/site-http.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import { NotificationSenderService } from './notification-sender.service.js';
import type { NotificationSource, NotificationsRepository } from './notifications.repository.js';
import { newNotifySecret, sealNotifySecret } from '../agents/notify-secret.js';

const AGENT = '5a6f1c1e-8d4e-4c4b-9a53-0b0f6a0e1f01';
const RUN = '0b7d6b8e-3f8e-4a51-8a1e-7f2f1c9d2e02';
const cipher = new VaultCipher({ vaultKeys: [{ id: 'k1', key: Buffer.alloc(32, 7) }] } as unknown as Settings);
const secret = newNotifySecret();
const input: NotificationInput = {
  messageId: `msg_${RUN}_run_completed`,
  event: 'run_completed',
  agentId: AGENT,
  runId: RUN,
};

function source(agent: Partial<NotificationSource['agent']> = {}): NotificationSource {
  return {
    agent: {
      id: AGENT,
      name: 'Notifier',
      notifyUrl: 'https://hooks.example.com/in?token=query-secret',
      notifyEvents: ['run_completed'],
      notifySecret: sealNotifySecret(cipher, AGENT, secret),
      ...agent,
    },
    run: {
      id: RUN,
      status: 'completed',
      triggeredBy: 'manual',
      startedAt: new Date('2026-11-26T10:00:00Z'),
      endedAt: new Date('2026-11-26T10:00:05Z'),
      error: null,
      lastEntry: { type: 'completed', output: 'the run output' },
    },
    approval: null,
  };
}

function sender(
  found: NotificationSource | null,
  answer: () => Promise<{ status: number }>,
  retryInitialSeconds = 10,
  historyOutput?: string,
): { service: NotificationSenderService; requests: SiteRequest[]; metrics: MetricsService } {
  const requests: SiteRequest[] = [];
  const repository = { source: async () => found } as unknown as NotificationsRepository;
  const http = {
    request: async (request: SiteRequest) => {
      requests.push(request);
      return { ...(await answer()), headers: {}, body: Buffer.from('receiver body text'), url: request.url };
    },
  } as unknown as SiteHttpClient;
  // A completed run's answer as its queue's history gives it before the run is archived.
  const runs = { outputOf: async () => historyOutput } as unknown as RunsService;
  const metrics = new MetricsService();
  const settings = {
    publicBaseUrl: 'https://agentsite.example.com/',
    notificationRetryInitialSeconds: retryInitialSeconds,
  } as Settings;
  return {
    service: new NotificationSenderService(repository, http, cipher, metrics, settings, runs),
    requests,
    metrics,
  };
}

async function counted(metrics: MetricsService): Promise<string> {
  return (await metrics.registry.getSingleMetricAsString('agentsite_notifications_total')).trim();
}

describe('NotificationSenderService', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('POSTs the body signed as Standard Webhooks do (the standardwebhooks package verifies it), with a 10 s timeout', async () => {
    const { service, requests, metrics } = sender(source(), async () => ({ status: 204 }));
    expect(await service.send(input, 1)).toEqual({ sent: true, status: 204 });
    const [request] = requests;
    expect(request).toMatchObject({
      method: 'POST',
      url: 'https://hooks.example.com/in?token=query-secret',
      timeoutMs: 10_000,
      redirect: 'manual',
    });
    expect(request!.headers!['webhook-id']).toBe(input.messageId);
    expect(() => new Webhook(secret).verify(request!.body!, request!.headers!)).not.toThrow();
    expect(() => new Webhook(newNotifySecret()).verify(request!.body!, request!.headers!)).toThrow();
    expect(JSON.parse(request!.body!)).toEqual({
      type: 'run_completed',
      timestamp: expect.any(String),
      data: {
        agent: { id: AGENT, name: 'Notifier' },
        run: {
          id: RUN,
          status: 'completed',
          triggeredBy: 'manual',
          startedAt: '2026-11-26T10:00:00.000Z',
          endedAt: '2026-11-26T10:00:05.000Z',
          output: 'the run output',
        },
        consoleUrl: `https://agentsite.example.com/runs/${RUN}`,
      },
    });
    expect(await counted(metrics)).toContain(
      'agentsite_notifications_total{event="run_completed",outcome="delivered"} 1',
    );
  });

  it('run_completed before the run is archived: the output is read from its queue history, without waiting', async () => {
    const unarchived = source();
    unarchived.run!.lastEntry = null;
    const { service, requests } = sender(unarchived, async () => ({ status: 204 }), 10, 'the answer from the history');
    const started = Date.now();
    expect(await service.send(input, 1)).toEqual({ sent: true, status: 204 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(JSON.parse(requests[0]!.body!).data.run.output).toBe('the answer from the history');
  });

  it('sends nothing when the agent or run is gone, notify was removed or the event is no longer listed', async () => {
    const cases: Array<[NotificationSource | null, string]> = [
      [null, 'agent_gone'],
      [{ ...source(), run: null }, 'run_gone'],
      [source({ notifyUrl: null, notifySecret: null }), 'notify_removed'],
      [source({ notifyEvents: ['run_failed'] }), 'event_not_listed'],
    ];
    for (const [found, reason] of cases) {
      const { service, requests } = sender(found, async () => ({ status: 200 }));
      expect(await service.send(input, 1)).toEqual({ sent: false, reason });
      expect(requests).toHaveLength(0);
    }
  });

  it('a non-2xx answer or a refused address throws a retryable NotificationNotDelivered; logs carry ids and status only', async () => {
    const lines: string[] = [];
    for (const level of ['log', 'warn', 'error'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((message: unknown) => {
        lines.push(String(message));
      });
    }
    const failing = sender(source(), async () => ({ status: 500 }));
    const err = await failing.service.send(input, 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotificationNotDelivered);
    expect(err).toMatchObject({ status: 500, message: 'the receiver answered 500', nextRetrySeconds: undefined });
    expect(await counted(failing.metrics)).toContain('outcome="failed"} 1');

    const refusing = sender(source(), async () => {
      throw new AppError('INVALID_URL', 'hooks.example.com resolves to a non-public address');
    });
    const refused = await refusing.service.send(input, 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotificationNotDelivered);
    expect((refused as Error).message).toContain('non-public address');

    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      expect(line).toContain(input.messageId);
      expect(line).not.toContain('query-secret');
      expect(line).not.toContain(secret.slice('whsec_'.length));
      expect(line).not.toContain('receiver body text');
      expect(line).not.toContain('the run output');
    }
    expect(lines[0]).toMatch(/attempt 3\): the receiver answered 500$/);
  });

  it('NOTIFICATION_RETRY_INITIAL_SECONDS other than 10 sets the next wait: doubling, at most an hour', async () => {
    const waits: Array<number | undefined> = [];
    for (const attempt of [1, 2, 3, 20]) {
      const { service } = sender(source(), async () => ({ status: 503 }), 1);
      waits.push(
        ((await service.send(input, attempt).catch((e: unknown) => e)) as NotificationNotDelivered).nextRetrySeconds,
      );
    }
    expect(waits).toEqual([1, 2, 4, 3600]);
  });
});
