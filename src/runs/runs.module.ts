import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentRemovalHooks } from '../agents/agent-removal-hooks.js';
import { AgentsModule } from '../agents/agents.module.js';
import { CreditHooks } from '../credits/credit-hooks.js';
import { CreditsModule } from '../credits/credits.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { UsersModule } from '../users/users.module.js';
import { AgentRunsController } from './agent-runs.controller.js';
import { RunArchiveService } from './run-archive.service.js';
import { RunReconcileRepository } from './run-reconcile.repository.js';
import { RunRetentionRepository } from './run-retention.repository.js';
import { RunReconcileService } from './run-reconcile.service.js';
import { RunArchiveEntity } from './run-archive.entity.js';
import { RunEnqueueService } from './run-enqueue.service.js';
import { RunRecordsService } from './run-records.service.js';
import { RunRetentionService } from './run-retention.service.js';
import { RunToolsService } from './run-tools.service.js';
import { RunToolSetEntity } from './run-tool-set.entity.js';
import { RunToolSetsRepository } from './run-tool-sets.repository.js';
import { RunToolSetsService } from './run-tool-sets.service.js';
import { RunEntity } from './run.entity.js';
import { RunExecutionRepository } from './run-execution.repository.js';
import { RunsController } from './runs.controller.js';
import { RunsRepository } from './runs.repository.js';
import { RUN_USAGE_CHARGE_PART } from './run-usage.repository.js';
import { RunsService } from './runs.service.js';
import { ScheduledRunsRepository } from './scheduled-runs.repository.js';
import { ScheduledRunsService } from './scheduled-runs.service.js';

/**
 * Agent runs: their rows and archived timelines, starting them in Temporal, the activities' port,
 * the retention clean-up, the /runs routes and the /agents/:id/runs routes (start, list). Deleting
 * an agent stops its queue first: the hook this module registers with agents (agents cannot import
 * runs).
 * Imports agents and users for their tables (a run reads its agent and owner) and tools for the
 * run's tool calls. The worker imports it for its services; in the worker's application context
 * the controllers are constructed but never routed (no HTTP adapter).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([RunEntity, RunArchiveEntity, RunToolSetEntity]),
    AgentsModule,
    UsersModule,
    CreditsModule,
    ToolsModule,
  ],
  controllers: [AgentRunsController, RunsController],
  providers: [
    RunsRepository,
    RunExecutionRepository,
    RunsService,
    RunEnqueueService,
    RunRecordsService,
    RunToolsService,
    RunToolSetsRepository,
    RunToolSetsService,
    RunArchiveService,
    RunRetentionService,
    RunReconcileRepository,
    RunRetentionRepository,
    RunReconcileService,
    ScheduledRunsRepository,
    ScheduledRunsService,
  ],
  exports: [
    RunsService,
    RunEnqueueService,
    RunRecordsService,
    RunToolsService,
    RunRetentionService,
    RunReconcileService,
  ],
})
export class RunsModule implements OnModuleInit {
  constructor(
    private readonly removal: AgentRemovalHooks,
    private readonly runs: RunsService,
    private readonly credits: CreditHooks,
  ) {}

  onModuleInit(): void {
    this.removal.register((agentId) => this.runs.stopAgent(agentId));
    // A run's model turn is charged by credits, which adds the turn's usage to the run through this.
    this.credits.registerRunUsage(RUN_USAGE_CHARGE_PART);
  }
}
