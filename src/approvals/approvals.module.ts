import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApprovalRecordsRepository } from './approval-records.repository.js';
import { ApprovalRecordsService } from './approval-records.service.js';
import { ApprovalEntity } from './approval.entity.js';

/**
 * Approvals: the calls of runs that waited for a person's decision. The worker writes the rows
 * through the runs' activities (ApprovalRecordsService, the `approvals` port).
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApprovalEntity])],
  providers: [ApprovalRecordsRepository, ApprovalRecordsService],
  exports: [ApprovalRecordsService],
})
export class ApprovalsModule {}
