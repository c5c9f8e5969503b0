import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import type { TemporalConnectionOptions } from './temporal-connection.js';
import { TRACED_WORKFLOW_BUNDLE_PATH, type WorkerTracing } from './temporal-tracing.js';
import { activityLogFieldsInterceptor } from './activity-log-fields.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/src/temporal → dist/ */
const distRoot = path.resolve(here, '..', '..');

/** The workflow bundle made by `npm run build`; without it the worker bundles `workflows/` at start. */
export const WORKFLOW_BUNDLE_PATH = path.join(distRoot, 'workflow-bundle.js');
export const WORKFLOWS_PATH = path.join(distRoot, 'workflows', 'index.js');

export interface WorkerConfig {
  /** From temporalConnectionOptions(settings): address, TLS, API key. */
  connection: TemporalConnectionOptions;
  namespace: string;
  taskQueue: string;
  identity?: string;
  deps: ActivityDeps;
  /** temporalDataConverter(settings): the payload codec and the failure converter. */
  dataConverter: DataConverter;
  /** Force bundling from source (tests of the workflow code itself). */
  bundleFromSource?: boolean;
  /** workerTracing(tracing), when OTEL_EXPORTER_OTLP_ENDPOINT is set: interceptors, sink, traced bundle. */
  tracing?: WorkerTracing;
  /**
   * Seconds in-flight activities may run on after SIGTERM before they are cancelled (settings'
   * WORKER_SHUTDOWN_GRACE_SECONDS). Without it the SDK cancels them at once: a tool call cut mid-way is
   * retried elsewhere, and the site sees it twice.
   */
  shutdownGraceSeconds?: number;
}

export function workflowSource(
  bundleFromSource = false,
  traced = false,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  // The traced bundle has the tracing workflow interceptors built in; the plain one has none, so an
  // untraced worker runs no tracing code in its workflows.
  const bundle = traced ? TRACED_WORKFLOW_BUNDLE_PATH : WORKFLOW_BUNDLE_PATH;
  if (!bundleFromSource && existsSync(bundle)) {
    return { workflowBundle: { codePath: bundle } };
  }
  return { workflowsPath: WORKFLOWS_PATH };
}

/** Connects to Temporal and builds the worker; `run()` is the caller's to await. */
export async function createWorker(config: WorkerConfig): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect(config.connection);
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    identity: config.identity,
    activities: createActivities(config.deps),
    dataConverter: config.dataConverter,
    ...workflowSource(config.bundleFromSource, config.tracing !== undefined),
    ...(config.tracing === undefined ? {} : { sinks: config.tracing.sinks }),
    reuseV8Context: true,
    ...(config.shutdownGraceSeconds === undefined ? {} : { shutdownGraceTime: config.shutdownGraceSeconds * 1000 }),
    interceptors: {
      ...config.tracing?.interceptors,
      // Every activity log line carries its run's ids (see activity-log-fields.ts); tracing adds its own.
      activity: [activityLogFieldsInterceptor, ...(config.tracing?.interceptors.activity ?? [])],
    },
  });
  return { worker, connection };
}
