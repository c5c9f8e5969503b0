import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunsModule } from '../runs/runs.module.js';
import { ApprovalEntity } from './approval.entity.js';
import { ApprovalsController, RunApprovalsController } from './approvals.controller.js';
import { ApprovalsRepository } from './approvals.repository.js';
import { ApprovalsService } from './approvals.service.js';

/**
 * Approvals: the calls of runs that waited for a person's decision (table `approvals`). The API's
 * side: the inbox (GET /approvals) and decisions (POST /runs/:id/approvals/:approvalId, sent to the
 * run's workflow as the Update `decideApproval`). Builds on runs (a decision answers the run).
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApprovalEntity]), RunsModule],
  controllers: [ApprovalsController, RunApprovalsController],
  providers: [ApprovalsRepository, ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
