import 'reflect-metadata';
import { hostname } from 'node:os';
import { NestFactory } from '@nestjs/core';
import { Connection } from '@temporalio/client';
import { createLogger } from './app.factory.js';
import { effectiveTemporalAddress, loadSettings, SettingsError } from './config/settings.js';
import { openDataSource, runMigrations } from './database/data-source.js';
import { MigrationRefusedError } from './database/migration-refused.error.js';
import { ensureSearchAttributes } from './temporal/temporal.module.js';
import { createWorker } from './temporal/worker-factory.js';
import { WorkerModule } from './worker.module.js';
import { ModelTurnService } from './model/model-turn.service.js';
import { RunToolsService } from './runs/run-tools.service.js';
import { RunRecordsService } from './runs/run-records.service.js';
import { RunRetentionService } from './runs/run-retention.service.js';

async function main(): Promise<void> {
  const settings = loadSettings();
  const logger = createLogger(settings, 'worker');
  const migrationSource = await openDataSource(settings);
  await runMigrations(migrationSource);
  await migrationSource.destroy();

  const address = effectiveTemporalAddress(settings);
  const client = await Connection.connect({ address });
  const added = await ensureSearchAttributes(client, settings.temporalNamespace);
  await client.close();
  if (added.length > 0) {
    logger.log(`registered search attributes: ${added.join(', ')}`);
  }

  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(settings), {
    logger: createLogger(settings, 'worker'),
  });
  // The daily clean-up of old runs follows RUN_RETENTION_DAYS: scheduled when set, unscheduled when not.
  const retention = await app.get(RunRetentionService).syncSchedule();
  logger.log(`run retention schedule: ${retention}`);
  const identity = `${process.pid}@${hostname()}`;
  const { worker, connection } = await createWorker({
    address,
    namespace: settings.temporalNamespace,
    taskQueue: settings.temporalTaskQueue,
    identity,
    deps: {
      workerIdentity: identity,
      runs: app.get(RunRecordsService),
      model: app.get(ModelTurnService),
      tools: app.get(RunToolsService),
    },
  });
  logger.log(`worker ${identity} polling task queue "${settings.temporalTaskQueue}" on ${address}`);
  // Worker.run() resolves after SIGINT/SIGTERM (the SDK's runtime handles them) once in-flight tasks finish.
  await worker.run();
  await connection.close();
  await app.close();
  logger.log('worker stopped');
}

main().catch((err: unknown) => {
  if (err instanceof SettingsError || err instanceof MigrationRefusedError) {
    // The operator's message as it is: what is wrong and what to do, no stack.
    console.error(err.message);
  } else {
    console.error('worker failed:', err);
  }
  process.exit(1);
});
