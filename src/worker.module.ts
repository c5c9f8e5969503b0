import { type DynamicModule, Module } from '@nestjs/common';
import { ApprovalsModule } from './approvals/approvals.module.js';
import { BillingModule } from './billing/billing.module.js';
import { CacheModule } from './common/cache/invalidation-bus.js';
import { SettingsModule } from './config/settings.module.js';
import { type Settings } from './config/settings.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { ModelModule } from './model/model.module.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { RunsModule } from './runs/runs.module.js';
import { TemporalModule } from './temporal/temporal.module.js';
import { TracingModule } from './tracing/tracing.module.js';

/**
 * The worker's host: the feature modules whose services fill the activities' ports (runs with its
 * tools, the model turn, the approvals' rows), and the metrics registry and readiness checks its own small HTTP server
 * (WORKER_HTTP_PORT) answers with; no Nest HTTP layer. Built with `WorkerModule.forRoot(settings)`:
 * the settings worker.ts loaded, not parsed again.
 */
@Module({
  imports: [
    DatabaseModule,
    CacheModule,
    TemporalModule,
    MetricsModule,
    HealthModule,
    RunsModule,
    ApprovalsModule,
    ModelModule,
    NotificationsModule,
    BillingModule,
    TracingModule,
  ],
})
export class WorkerModule {
  static forRoot(settings: Settings): DynamicModule {
    return { module: WorkerModule, imports: [SettingsModule.forRoot(settings)] };
  }
}
