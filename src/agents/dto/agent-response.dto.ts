import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { PageDto } from '../../common/api-schemas.js';
import { SCHEDULE_DESCRIBE_TIMEOUT_MS } from '../schedules.service.js';
import { WEBHOOK_FIELD_TYPES, type WebhookField, type WebhookFieldType } from '../agent.entity.js';
import type { AgentResponse } from '../agents.service.js';
import type { ApprovalPolicy, NotificationEvent } from '../../../workflows/contracts.js';
import { APPROVALS_RESPONSE_SCHEMA, NOTIFY_RESPONSE_SCHEMA } from './agent-policy.dto.js';

export class WebhookFieldResponseDto implements WebhookField {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: WEBHOOK_FIELD_TYPES })
  type: WebhookFieldType;

  @ApiPropertyOptional()
  description?: string;

  @ApiPropertyOptional({ description: 'Saved as false when not given' })
  required?: boolean;
}

export class ManualTriggerDto {
  @ApiProperty({ enum: ['manual'] })
  type: 'manual';
}

export class ScheduledTriggerDto {
  @ApiProperty({ enum: ['scheduled'] })
  type: 'scheduled';

  @ApiProperty({ example: '*/15 * * * *' })
  cron: string;

  @ApiProperty({ example: 'Europe/Berlin', description: 'IANA time zone' })
  timezone: string;
}

export class WebhookTriggerDto {
  @ApiProperty({ enum: ['webhook'] })
  type: 'webhook';

  @ApiProperty()
  allowActionOverride: boolean;

  @ApiProperty({ type: [WebhookFieldResponseDto], description: 'The payload fields' })
  schema: WebhookFieldResponseDto[];
}

const TRIGGERS = [ManualTriggerDto, ScheduledTriggerDto, WebhookTriggerDto];

@ApiExtraModels(...TRIGGERS)
export class AgentResponseDto implements AgentResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty()
  systemPrompt: string;

  @ApiProperty({ type: 'array', items: { type: 'string', format: 'uuid' } })
  siteIds: string[];

  @ApiProperty({ description: "The agent's model, or the default model" })
  model: string;

  @ApiProperty({
    oneOf: TRIGGERS.map((t) => ({ $ref: getSchemaPath(t) })),
    discriminator: {
      propertyName: 'type',
      mapping: {
        manual: getSchemaPath(ManualTriggerDto),
        scheduled: getSchemaPath(ScheduledTriggerDto),
        webhook: getSchemaPath(WebhookTriggerDto),
      },
    },
  })
  trigger: ManualTriggerDto | ScheduledTriggerDto | WebhookTriggerDto;

  @ApiPropertyOptional({ description: 'Webhook agents: where to POST the payload' })
  webhookUrl?: string;

  @ApiPropertyOptional({
    description: 'Only in the answer of the save that generated it (create, or a switch to webhook)',
  })
  webhookSecret?: string;

  @ApiProperty(APPROVALS_RESPONSE_SCHEMA)
  approvals: ApprovalPolicy | null;

  @ApiProperty(NOTIFY_RESPONSE_SCHEMA)
  notify: { url: string; events: NotificationEvent[] } | null;

  @ApiPropertyOptional({
    description:
      'The notification signing secret (Standard Webhooks, `whsec_…`): only in the answer of the save that first set notify',
    example: 'whsec_…',
  })
  notifySecret?: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;
}

/** A scheduled agent's Temporal schedule (described inline in AgentDetailDto). */
export interface AgentScheduleDto {
  nextRunAt: string | null;
  skippedOverlaps: number;
  paused: boolean;
}

/** One agent: scheduled agents add their Temporal schedule (null if it is missing, absent if Temporal is slow). */
export class AgentDetailDto extends AgentResponseDto {
  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    properties: {
      nextRunAt: { type: 'string', format: 'date-time', nullable: true },
      skippedOverlaps: { type: 'integer', description: 'Firings skipped because a run was still going' },
      paused: { type: 'boolean' },
    },
    required: ['nextRunAt', 'skippedOverlaps', 'paused'],
    description:
      'Scheduled agents only: their Temporal schedule (null if it is missing; absent when Temporal ' +
      `did not answer within ${SCHEDULE_DESCRIBE_TIMEOUT_MS / 1000} s, the agent being served without it)`,
  })
  schedule?: AgentScheduleDto | null;
}

export class AgentPageDto extends PageDto(AgentResponseDto) {}

export class WebhookSecretDto {
  @ApiProperty({ description: 'The new secret, shown this once', example: 'whsec_…' })
  webhookSecret: string;
}

export class NotifySecretDto {
  @ApiProperty({ description: 'The new notification signing secret, shown this once', example: 'whsec_…' })
  notifySecret: string;
}
