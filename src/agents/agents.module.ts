import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { AgentEntity } from './agent.entity.js';
import { AgentPolicies } from './agent-policy.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentRemovalHooks } from './agent-removal-hooks.js';
import { AgentsController } from './agents.controller.js';
import { AgentsService } from './agents.service.js';
import { SchedulesService } from './schedules.service.js';

/**
 * Agents (table `agents`), their Temporal schedules and the /agents routes. Runs build on agents:
 * starting and listing an agent's runs are routes of RunsModule, and deleting an agent stops its
 * queue through the hook RunsModule registers in AgentRemovalHooks. The worker imports it (through
 * runs) for its services; there AgentsController is constructed but never routed.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AgentEntity]), SitesModule, VaultModule],
  controllers: [AgentsController],
  providers: [AgentsService, AgentPolicies, AgentsRepository, SchedulesService, AgentRemovalHooks],
  exports: [AgentsService, SchedulesService, AgentRemovalHooks],
})
export class AgentsModule {}
