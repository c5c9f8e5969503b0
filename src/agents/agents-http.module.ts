import { Module } from '@nestjs/common';
import { CreditsModule } from '../credits/credits.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { AgentsController } from './agents.controller.js';
import { AgentsModule } from './agents.module.js';

/**
 * The /agents routes. Apart from AgentsModule because they also start and list an agent's runs, and
 * the runs module imports agents: one module would be a cycle.
 */
@Module({
  imports: [AgentsModule, RunsModule, CreditsModule],
  controllers: [AgentsController],
})
export class AgentsHttpModule {}
