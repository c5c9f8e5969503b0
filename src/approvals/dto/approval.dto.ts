import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { PageDto } from '../../common/api-schemas.js';
import { Nullable, Optional } from '../../common/optional.js';
import { CursorParam, KEYSET_CURSOR, LimitParam } from '../../common/pagination.js';
import {
  APPROVAL_SCOPES,
  type ApprovalDecider,
  type ApprovalDecision,
  type ApprovalScope,
  type ApprovalStatus,
} from '../../../workflows/contracts.js';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
export const APPROVAL_DECISIONS = ['approve', 'deny'] as const;
/** The longest note a decision may carry. */
export const MAX_NOTE = 1000;

export class ApprovalsQueryDto {
  @LimitParam()
  limit?: number;

  @CursorParam(KEYSET_CURSOR)
  cursor?: string;

  @ApiPropertyOptional({ enum: APPROVAL_STATUSES, description: 'Only the approvals of this status' })
  @Optional()
  @IsIn(APPROVAL_STATUSES)
  status?: ApprovalStatus;
}

export class DecideApprovalDto {
  @ApiProperty({ enum: APPROVAL_DECISIONS, description: 'approve: the call is made; deny: the model is told no' })
  @IsIn(APPROVAL_DECISIONS)
  decision: ApprovalDecision;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_NOTE,
    description: 'Why (a denial gives it to the model with the refusal)',
  })
  @Nullable()
  @IsString()
  @MaxLength(MAX_NOTE)
  note?: string | null;
}

/** A call of a run that waited (or waits) for a person's decision. */
export class ApprovalDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  runId: string;

  @ApiProperty({ format: 'uuid' })
  agentId: string;

  @ApiProperty()
  agentName: string;

  @ApiProperty({ description: 'The name of the site whose tool is called' })
  site: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null: the site was removed' })
  siteId: string | null;

  @ApiProperty()
  tool: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'What the model asked the tool to be called with',
  })
  input: unknown;

  @ApiProperty({ enum: APPROVAL_SCOPES })
  scope: ApprovalScope;

  @ApiProperty({ format: 'date-time' })
  requestedAt: string;

  @ApiProperty({ format: 'date-time', description: 'Without a decision by then, the call is refused' })
  expiresAt: string;

  @ApiProperty({ enum: APPROVAL_STATUSES })
  status: ApprovalStatus;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  decidedAt: string | null;

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { userId: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
    required: ['userId', 'name'],
    selfRequired: true,
    description: 'Who decided; null while pending, and for an expired or cancelled wait',
  })
  decidedBy: ApprovalDecider | null;

  @ApiProperty({ type: String, nullable: true, description: "The decider's note" })
  note: string | null;
}

export class ApprovalPageDto extends PageDto(ApprovalDto) {}
