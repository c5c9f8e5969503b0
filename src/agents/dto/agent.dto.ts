import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { Nullable, Optional } from '../../common/optional.js';
import { ApprovalPolicyDto, ApprovalsField, NotifyDto, NotifyField } from './agent-policy.dto.js';
import { TRIGGER_TYPES, type TriggerType, WEBHOOK_FIELD_TYPES, type WebhookFieldType } from '../agent.entity.js';

export class WebhookFieldDto {
  @ApiProperty({ example: 'customer_email', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$', maxLength: 64 })
  @IsString()
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: 'name must be an identifier of at most 64 characters' })
  name: string;

  @ApiProperty({ enum: WEBHOOK_FIELD_TYPES })
  @IsIn(WEBHOOK_FIELD_TYPES)
  type: WebhookFieldType;

  @ApiPropertyOptional({ maxLength: 1000 })
  @Optional()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional({ default: false })
  @Optional()
  @IsBoolean()
  required?: boolean;
}

export class TriggerDto {
  @ApiProperty({ enum: TRIGGER_TYPES })
  @IsIn(TRIGGER_TYPES)
  type: TriggerType;

  @ApiPropertyOptional({ description: 'scheduled: a 5-field cron expression', example: '*/15 * * * *', maxLength: 200 })
  @Optional()
  @IsString()
  @MaxLength(200)
  cron?: string;

  @ApiPropertyOptional({
    description: 'scheduled: an IANA time zone (default UTC)',
    example: 'Europe/Berlin',
    maxLength: 100,
  })
  @Optional()
  @IsString()
  @MaxLength(100)
  timezone?: string;

  @ApiPropertyOptional({ description: 'webhook: let a string `action` in the payload replace the system prompt' })
  @Optional()
  @IsBoolean()
  allowActionOverride?: boolean;

  @ApiPropertyOptional({ type: [WebhookFieldDto], description: 'webhook: the payload fields', maxItems: 100 })
  @Optional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => WebhookFieldDto)
  schema?: WebhookFieldDto[];
}

export class CreateAgentDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiProperty({ minLength: 1, maxLength: 50_000 })
  @IsString()
  @MinLength(1)
  @MaxLength(50_000)
  systemPrompt: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', format: 'uuid' },
    maxItems: 20,
    description: 'Ids of sites in your vault',
  })
  @IsArray()
  @ArrayMaxSize(20)
  @IsUUID('all', { each: true })
  siteIds: string[];

  @ApiPropertyOptional({ description: 'Model name (default: DEFAULT_MODEL)', maxLength: 100 })
  @Optional()
  @IsString()
  @MaxLength(100)
  model?: string;

  @ApiProperty({ type: TriggerDto })
  @IsObject()
  @ValidateNested()
  @Type(() => TriggerDto)
  trigger: TriggerDto;

  @ApprovalsField()
  approvals?: ApprovalPolicyDto | null;

  @NotifyField()
  notify?: NotifyDto | null;
}

export class UpdateAgentDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @Optional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 50_000 })
  @Optional()
  @IsString()
  @MinLength(1)
  @MaxLength(50_000)
  systemPrompt?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', format: 'uuid' }, maxItems: 20 })
  @Optional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsUUID('all', { each: true })
  siteIds?: string[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 100,
    description: 'Model name; null goes back to the default (DEFAULT_MODEL)',
  })
  @Nullable()
  @IsString()
  @MaxLength(100)
  model?: string | null;

  @ApiPropertyOptional({ type: TriggerDto })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => TriggerDto)
  trigger?: TriggerDto;

  @ApprovalsField()
  approvals?: ApprovalPolicyDto | null;

  @NotifyField()
  notify?: NotifyDto | null;
}
