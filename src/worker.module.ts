import { Module } from '@nestjs/common';
import { SettingsModule } from './config/settings.module.js';
import { DatabaseModule } from './database/database.module.js';
import { SitesCoreModule } from './sites/sites-core.module.js';
import { AgentsCoreModule } from './agents/agents-core.module.js';
import { TemporalModule } from './temporal/temporal.module.js';

/** The services the worker's activities use (the ports of `createActivities`). No HTTP layer. */
@Module({
  imports: [SettingsModule, DatabaseModule, TemporalModule, SitesCoreModule, AgentsCoreModule],
})
export class WorkerModule {}
