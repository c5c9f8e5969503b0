import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { openDataSource, runMigrations } from './database/data-source.js';
import { createApp, createLogger } from './app.factory.js';
import { routeConsoleTo } from './common/json-logger.js';
import { loadSettings, SettingsError } from './config/settings.js';
import { MigrationRefusedError } from './database/migration-refused.error.js';
import { consoleIsBuilt } from './console/serve-console.js';
import { describeTemporalConnection } from './temporal/temporal-connection.js';
import { startTracing } from './tracing/tracing.js';

async function main(): Promise<void> {
  const settings = loadSettings();
  // Before the HTTP server and the Temporal client exist (OTEL_EXPORTER_OTLP_ENDPOINT set; otherwise nothing happens).
  await startTracing(settings, 'api');
  const logger = createLogger(settings, 'main');
  // Lines written before Nest is up (migrations) have the same JSON shape.
  Logger.overrideLogger(logger);
  routeConsoleTo(logger);
  // Migrations run before the API takes requests (serialised across processes by an advisory lock).
  const migrationSource = await openDataSource(settings);
  const applied = await runMigrations(migrationSource);
  await migrationSource.destroy();
  if (applied.length > 0) {
    logger.log(`applied migrations: ${applied.join(', ')}`);
  }
  const app = await createApp(settings);
  await app.listen(settings.port, settings.host);
  logger.log(`API listening on ${settings.publicBaseUrl}/api (OpenAPI: ${settings.publicBaseUrl}/api/docs)`);
  logger.log(
    consoleIsBuilt()
      ? `Console at ${settings.publicBaseUrl}/`
      : 'No console: dist/console is missing (npm run build makes it)',
  );
  logger.log(`Temporal at ${describeTemporalConnection(settings)}, namespace "${settings.temporalNamespace}"`);
}

main().catch((err: unknown) => {
  if (err instanceof SettingsError || err instanceof MigrationRefusedError) {
    // The operator's message as it is (not a JSON line): what is wrong and what to do, no stack.
    process.stderr.write(`${err.message}\n`);
  } else {
    console.error('API failed to start:', err);
  }
  process.exit(1);
});
