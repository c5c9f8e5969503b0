import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunsModule } from '../runs/runs.module.js';
import { ApprovalRecordsRepository } from './approval-records.repository.js';
import { ApprovalRecordsService } from './approval-records.service.js';
import { ApprovalEntity } from './approval.entity.js';
import { ApprovalsController, RunApprovalsController } from './approvals.controller.js';
import { ApprovalsRepository } from './approvals.repository.js';
import { ApprovalsService } from './approvals.service.js';

/**
 * Approvals: the calls of runs that waited for a person's decision (table `approvals`). The worker
 * writes the rows through the runs' activities (ApprovalRecordsService, the `approvals` port). The
 * API reads them for the inbox (GET /approvals) and sends decisions (POST /runs/:id/approvals/:approvalId)
 * to the run's workflow as the Update `decideApproval`. Builds on runs (a decision answers the run);
 * in the worker the controllers are constructed but never routed.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApprovalEntity]), RunsModule],
  controllers: [ApprovalsController, RunApprovalsController],
  providers: [ApprovalRecordsRepository, ApprovalRecordsService, ApprovalsRepository, ApprovalsService],
  exports: [ApprovalRecordsService, ApprovalsService],
})
export class ApprovalsModule {}
