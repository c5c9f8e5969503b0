import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentEntity } from './agent.entity.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentsService } from './agents.service.js';
import { SchedulesService } from './schedules.service.js';

/**
 * Agents (table `agents`) and their Temporal schedules. No routes: runs build on agents, and the
 * /agents routes (AgentsHttpModule) also start and list runs, so they sit above both.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AgentEntity])],
  providers: [AgentsService, AgentsRepository, SchedulesService],
  exports: [AgentsService, SchedulesService],
})
export class AgentsModule {}
