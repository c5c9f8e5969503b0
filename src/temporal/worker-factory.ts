import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import type { TemporalConnectionOptions } from './temporal-connection.js';
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
}

export function workflowSource(bundleFromSource = false): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (!bundleFromSource && existsSync(WORKFLOW_BUNDLE_PATH)) {
    return { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } };
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
    ...workflowSource(config.bundleFromSource),
    reuseV8Context: true,
    // Every activity log line carries its run's ids (see activity-log-fields.ts).
    interceptors: { activity: [activityLogFieldsInterceptor] },
  });
  return { worker, connection };
}
