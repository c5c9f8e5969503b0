import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageDto } from '../../common/api-schemas.js';
import type { RunTrigger } from '../../../workflows/contracts.js';
import type { RunAwaiting, RunResponse } from '../run-response.js';
import { APPROVAL_SCOPES } from '../../../workflows/contracts.js';
import { RUN_STATUSES, type RunStatus } from '../run.entity.js';
import type { TimelineEntry } from '../timeline.js';
import { RUN_TRIGGERS, TIMELINE_ENTRY_MODELS, TIMELINE_ENTRY_SCHEMA } from './timeline-entry.dto.js';

/** How a run failed (described inline in RunResponseDto). */
export interface RunErrorDto {
  error: string;
  code: string;
}

export class RunUsageDto {
  @ApiProperty({ type: 'integer' })
  inputTokens: number;

  @ApiProperty({ type: 'integer' })
  outputTokens: number;

  @ApiProperty({ type: 'integer' })
  credits: number;
}

export class RunTemporalDto {
  @ApiProperty({
    description: "The workflow that runs it: its agent's queue `agent-<agentId>`, which runs the agent's runs itself",
  })
  workflowId: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The execution of that workflow (Temporal's run id) that ran it, where its history is; null until the run started",
  })
  runId: string | null;
}

@ApiExtraModels(...TIMELINE_ENTRY_MODELS)
export class RunResponseDto implements RunResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  agentId: string;

  @ApiProperty({ enum: RUN_STATUSES })
  status: RunStatus;

  @ApiProperty({ enum: RUN_TRIGGERS })
  triggeredBy: RunTrigger;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Webhook runs: the payload as received; null otherwise',
  })
  payload: unknown;

  @ApiProperty({ type: String, nullable: true, description: 'Manual runs: what the agent was asked' })
  input: string | null;

  @ApiProperty({ enum: ['agent', 'webhook_action'] })
  systemPromptSource: 'agent' | 'webhook_action';

  @ApiProperty({ format: 'date-time' })
  queuedAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  startedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  endedAt: string | null;

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { error: { type: 'string' }, code: { type: 'string' } },
    required: ['error', 'code'],
    // Without it the array above is taken for this property's own flag: the document would let it be left out.
    selfRequired: true,
    description: 'How a failed run failed; null otherwise',
  })
  error: RunErrorDto | null;

  @ApiProperty({ type: RunUsageDto })
  usage: RunUsageDto;

  @ApiProperty({ type: RunTemporalDto })
  temporal: RunTemporalDto;

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: {
      approvalId: { type: 'string', format: 'uuid' },
      site: { type: 'string', description: "The site's name" },
      tool: { type: 'string' },
      scope: { type: 'string', enum: [...APPROVAL_SCOPES] },
      expiresAt: {
        type: 'string',
        format: 'date-time',
        description: 'Without a decision by then, the call is refused',
      },
    },
    required: ['approvalId', 'site', 'tool', 'scope', 'expiresAt'],
    selfRequired: true,
    description:
      "The call the run waits on for a person's decision (POST /runs/{id}/approvals/{approvalId}); null otherwise. " +
      'The run stays active while it waits',
  })
  awaiting: RunAwaiting | null;

  @ApiPropertyOptional({
    type: 'array',
    items: TIMELINE_ENTRY_SCHEMA,
    description: 'GET /runs/{id}: what happened, in order (from the workflow history, or the archive)',
  })
  timeline?: TimelineEntry[];
}

export class RunPageDto extends PageDto(RunResponseDto) {}
