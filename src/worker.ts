import 'reflect-metadata';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Connection } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import { createJsonLogger, routeConsoleTo } from './common/json-logger.js';
import { loadSettings, SettingsError } from './config/settings.js';
import { openDataSource, runMigrations } from './database/data-source.js';
import { MigrationRefusedError } from './database/migration-refused.error.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../workflows/contracts.js';
import { ensureSearchAttributes } from './temporal/temporal.module.js';
import {
  describeTemporalConnection,
  explainConnectError,
  TemporalConnectError,
  temporalConnectionOptions,
} from './temporal/temporal-connection.js';
import { temporalDataConverter } from './temporal/payload-codec.js';
import { temporalRuntimeLogging } from './temporal/runtime-logger.js';
import { createWorker } from './temporal/worker-factory.js';
import { workerTracing } from './temporal/temporal-tracing.js';
import { startTracing } from './tracing/tracing.js';
import { WorkerModule } from './worker.module.js';
import { ReadinessService } from './health/readiness.service.js';
import { startWorkerHttpServer } from './health/worker-http-server.js';
import { MetricsService } from './metrics/metrics.service.js';
import { freeLoopbackPort, sdkMetricsText, sdkPrometheusExporter } from './metrics/temporal-sdk-metrics.js';
import { ModelTurnService } from './model/model-turn.service.js';
import { NotificationSenderService } from './notifications/notification-sender.service.js';
import { RunToolsService } from './runs/run-tools.service.js';
import { ApprovalRecordsService } from './approvals/approval-records.service.js';
import { RunRecordsService } from './runs/run-records.service.js';
import { RunReconcileService } from './runs/run-reconcile.service.js';
import { RunRetentionService } from './runs/run-retention.service.js';
import { PurchaseReconcileService } from './billing/purchase-reconcile.service.js';

/** gRPC PERMISSION_DENIED and UNIMPLEMENTED: the server does not let this caller use the operator service. */
const OPERATOR_SERVICE_REFUSED = [7, 12];

function isGrpcStatus(err: unknown, codes: number[]): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && codes.includes(code);
}

async function main(): Promise<void> {
  const settings = loadSettings();
  // Before anything makes a request (OTEL_EXPORTER_OTLP_ENDPOINT set; otherwise nothing happens).
  const tracing = await startTracing(settings, 'worker');
  const logger = createJsonLogger('worker', settings.logLevel, 'worker');
  // Lines written before Nest is up (migrations) have the same JSON shape.
  Logger.overrideLogger(logger);
  routeConsoleTo(logger);
  // Before any native connection: the SDK's lines (worker, activities, workflows' `log`, the core's)
  // are written in the same JSON shape as the Nest lines.
  const temporalLogs = temporalRuntimeLogging(settings.logLevel);
  // With WORKER_HTTP_PORT, the SDK's own metrics too (on a loopback port the worker's server reads).
  // The Runtime is installed once (a second install throws), before any native connection.
  const sdkMetricsPort = settings.workerHttpPort === undefined ? undefined : await freeLoopbackPort();
  Runtime.install({
    logger: temporalLogs.logger,
    telemetryOptions: {
      logging: temporalLogs.logging,
      ...(sdkMetricsPort === undefined ? {} : { metrics: sdkPrometheusExporter(sdkMetricsPort) }),
    },
  });
  const migrationSource = await openDataSource(settings);
  await runMigrations(migrationSource);
  await migrationSource.destroy();

  const connectionOptions = temporalConnectionOptions(settings);
  const client = await Connection.connect({
    ...connectionOptions,
    connectTimeout: settings.temporalConnectTimeoutSeconds * 1000,
  }).catch(async (err: unknown) => {
    throw await explainConnectError(err, settings);
  });
  try {
    const added = await ensureSearchAttributes(client, settings.temporalNamespace);
    if (added.length > 0) {
      logger.log(`registered search attributes: ${added.join(', ')}`);
    }
  } catch (err) {
    if (!isGrpcStatus(err, OPERATOR_SERVICE_REFUSED)) {
      throw err;
    }
    // Temporal Cloud refuses the operator service to API keys and client certificates alike; there
    // the namespace's attributes are managed with tcld or the Cloud UI.
    logger.warn(
      `cannot list the namespace's search attributes (${(err as Error).message}); make sure ` +
        `${settings.temporalNamespace} has the search attributes ${Object.entries(SEARCH_ATTRIBUTE_TYPES)
          .map(([name, type]) => `${name} (${type === 'KEYWORD_LIST' ? 'KeywordList' : 'Keyword'})`)
          .join(', ')} ` +
        '(Temporal Cloud: tcld namespace search-attributes add, or the Cloud UI)',
    );
  } finally {
    await client.close();
  }

  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(settings), {
    logger: createJsonLogger('worker', settings.logLevel, 'worker'),
  });
  // The daily clean-up of old runs follows RUN_RETENTION_DAYS: scheduled when set, unscheduled when not.
  const retention = await app.get(RunRetentionService).syncSchedule();
  logger.log(`run retention schedule: ${retention}`);
  // Pending card purchases looked up at Stripe every 5 minutes: scheduled with Stripe, removed without.
  logger.log(`purchase reconcile schedule: ${await app.get(PurchaseReconcileService).syncSchedule()}`);
  // Runs whose execution ended without ending or archiving them (terminated by an operator).
  logger.log(`run reconcile schedule: ${await app.get(RunReconcileService).syncSchedule()}`);
  const identity = `${process.pid}@${hostname()}`;
  const { worker, connection } = await createWorker({
    connection: connectionOptions,
    namespace: settings.temporalNamespace,
    taskQueue: settings.temporalTaskQueue,
    identity,
    dataConverter: temporalDataConverter(settings),
    shutdownGraceSeconds: settings.workerShutdownGraceSeconds,
    tracing: tracing === undefined ? undefined : await workerTracing(tracing),
    deps: {
      workerIdentity: identity,
      runs: app.get(RunRecordsService),
      approvals: app.get(ApprovalRecordsService),
      model: app.get(ModelTurnService),
      tools: app.get(RunToolsService),
      notifications: app.get(NotificationSenderService),
      purchases: app.get(PurchaseReconcileService),
    },
  }).catch(async (err: unknown) => {
    // The native connection has a TLS stack of its own (rustls): it may refuse what the client accepted.
    throw err instanceof Error && err.name === 'TransportError' ? await explainConnectError(err, settings) : err;
  });
  logger.log(
    `worker ${identity} polling task queue "${settings.temporalTaskQueue}" on ${describeTemporalConnection(settings)}`,
  );
  // Up before the worker polls, so a taken port stops the process before it takes any task.
  const http =
    settings.workerHttpPort === undefined
      ? undefined
      : await startWorkerHttpServer({
          port: settings.workerHttpPort,
          host: settings.host,
          metricsToken: settings.metricsToken,
          notReady: async () =>
            worker.getState() !== 'RUNNING'
              ? ['the worker is not running']
              : app.get(ReadinessService).notReady({
                  identity,
                  onDown: (component, detail) => logger.warn(`readiness: ${component} is down: ${detail}`),
                }),
          metrics: async () =>
            `${await app.get(MetricsService).render()}\n${sdkMetricsPort === undefined ? '' : await sdkMetricsText(sdkMetricsPort)}`,
        }).catch((err: unknown) => {
          throw (err as { code?: unknown }).code === 'EADDRINUSE'
            ? new SettingsError([`WORKER_HTTP_PORT ${settings.workerHttpPort} is in use by another process`])
            : err;
        });
  if (http !== undefined) {
    logger.log(`worker health and metrics on port ${http.port} (/health/live, /health/ready, /metrics)`);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () =>
      logger.log(
        `${signal}: stopping; no new tasks, in-flight activities have up to ${settings.workerShutdownGraceSeconds} s to finish`,
      ),
    );
  }
  // Worker.run() resolves after SIGINT/SIGTERM (the SDK's runtime handles them): no new task is taken,
  // and the activities in flight finish within WORKER_SHUTDOWN_GRACE_SECONDS (then they are cancelled).
  await worker.run();
  await http?.close();
  await connection.close();
  await app.close();
  logger.log('worker stopped');
}

main().catch((err: unknown) => {
  if (err instanceof SettingsError || err instanceof MigrationRefusedError || err instanceof TemporalConnectError) {
    // The operator's message as it is (not a JSON line): what is wrong and what to do, no stack.
    process.stderr.write(`${err.message}\n`);
  } else {
    console.error('worker failed:', err);
  }
  process.exit(1);
});
