import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Connection } from '@temporalio/client';
import type { ApiReply, ApiRequest } from '../common/http.js';
import type { DataSource } from 'typeorm';
import type { Settings } from '../config/settings.js';
import { HEALTH_CACHE_MS, HealthController } from './health.controller.js';
import type { ReadinessService } from './readiness.service.js';

/** A controller over fake dependencies that count the calls the checks make. */
function controller() {
  const calls = { query: 0, health: 0, describe: 0 };
  const dataSource = {
    query: async () => {
      calls.query += 1;
      return [];
    },
  } as unknown as DataSource;
  const temporal = {
    healthService: {
      check: async () => {
        calls.health += 1;
        return {};
      },
    },
    workflowService: {
      describeTaskQueue: async () => {
        calls.describe += 1;
        return { pollers: [{}] };
      },
    },
  } as unknown as Connection;
  const settings = { temporalNamespace: 'default', temporalTaskQueue: 'q' } as Settings;
  const health = new HealthController(dataSource, temporal, settings, {} as ReadinessService);
  const statuses: number[] = [];
  const res = {
    code: (code: number) => {
      statuses.push(code);
      return res;
    },
  } as unknown as ApiReply;
  const req = { headers: {} } as ApiRequest;
  return { calls, statuses, get: () => health.health(req, res) };
}

describe('GET /api/health', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it(`checks the database and Temporal at most once per ${HEALTH_CACHE_MS} ms; answers in between repeat the report`, async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const { calls, statuses, get } = controller();

    // Requests that arrive together share one check.
    const [first, second] = await Promise.all([get(), get()]);
    expect(calls).toEqual({ query: 1, health: 1, describe: 1 });
    expect(second).toBe(first);
    expect(first).toMatchObject({ status: 'ok', temporal: { workerPollers: 1 } });

    now += HEALTH_CACHE_MS - 1;
    expect(await get()).toBe(first);
    expect(calls).toEqual({ query: 1, health: 1, describe: 1 });
    expect(statuses).toEqual([200, 200, 200]);

    // A second after the check ended, the next request checks again.
    now += 1;
    const third = await get();
    expect(third).not.toBe(first);
    expect(calls).toEqual({ query: 2, health: 2, describe: 2 });
  });
});
