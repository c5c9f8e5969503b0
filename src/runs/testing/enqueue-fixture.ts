import { standIn } from '../../common/testing/stand-in.js';
import type { Settings } from '../../config/settings.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { RunEnqueueService } from '../run-enqueue.service.js';
import type { RunsRepository } from '../runs.repository.js';
import { FakeRunsRepository } from './fake-runs.repository.js';
import { FakeTemporalClient } from './fake-temporal-client.js';

/**
 * The real RunEnqueueService over the runs fakes (rows in memory, a fake Temporal client), for the
 * specs of this feature and of the features that queue runs through it (webhooks): they reach the
 * runs' rows through this fixture, never through the runs repository.
 */
export function enqueueFixture(maxQueuedRuns = 1000) {
  const runs = new FakeRunsRepository();
  const temporal = new FakeTemporalClient();
  const metrics = new MetricsService();
  const settings = standIn<Settings>({ temporalTaskQueue: 'unit', agentQueueExecutionSeconds: 3600, maxQueuedRuns });
  const service = new RunEnqueueService(standIn<RunsRepository>(runs), temporal.asClient(), settings, metrics);
  return { runs, temporal, metrics, service };
}
