import { Module } from '@nestjs/common';
import { CreditsService } from '../credits/credits.service.js';
import { DatabaseModule } from '../database/database.module.js';
import { ModelClient } from '../model/model-client.js';
import { ModelTurnService } from '../model/model-turn.service.js';
import { RunToolsService } from '../runs/run-tools.service.js';
import { RunEnqueueService } from '../runs/run-enqueue.service.js';
import { RunRecordsService } from '../runs/run-records.service.js';
import { RunsRepository } from '../runs/runs.repository.js';
import { RunsService } from '../runs/runs.service.js';
import { SitesCoreModule } from '../sites/sites-core.module.js';
import { UsersModule } from '../users/users.module.js';
import { AgentsService } from './agents.service.js';
import { SchedulesService } from './schedules.service.js';

const SERVICES = [
  AgentsService,
  SchedulesService,
  RunsService,
  RunsRepository,
  RunEnqueueService,
  RunRecordsService,
  CreditsService,
  ModelClient,
  ModelTurnService,
  RunToolsService,
];

/** Agents, runs, credits and the model, without HTTP routes: shared by the API and the worker. */
@Module({
  imports: [DatabaseModule, SitesCoreModule, UsersModule],
  providers: SERVICES,
  exports: SERVICES,
})
export class AgentsCoreModule {}
