import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { TRIGGER_TYPES, type TriggerType, WEBHOOK_FIELD_TYPES, type WebhookFieldType } from '../agent.entity.js';

export class WebhookFieldDto {
  @ApiProperty({ example: 'customer_email' })
  @IsString()
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: 'name must be an identifier of at most 64 characters' })
  name: string;

  @ApiProperty({ enum: WEBHOOK_FIELD_TYPES })
  @IsIn(WEBHOOK_FIELD_TYPES)
  type: WebhookFieldType;

  @ApiPropertyOptional({ maxLength: 1000 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  required?: boolean;
}

export class TriggerDto {
  @ApiProperty({ enum: TRIGGER_TYPES })
  @IsIn(TRIGGER_TYPES)
  type: TriggerType;

  @ApiPropertyOptional({ description: 'scheduled: a 5-field cron expression', example: '*/15 * * * *' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cron?: string;

  @ApiPropertyOptional({ description: 'scheduled: an IANA time zone (default UTC)', example: 'Europe/Berlin' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  timezone?: string;

  @ApiPropertyOptional({ description: 'webhook: let a string `action` in the payload replace the system prompt' })
  @IsOptional()
  @IsBoolean()
  allowActionOverride?: boolean;

  @ApiPropertyOptional({ type: [WebhookFieldDto], description: 'webhook: the payload fields' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => WebhookFieldDto)
  schema?: WebhookFieldDto[];
}

export class CreateAgentDto {
  @ApiProperty({ maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiProperty({ maxLength: 50_000 })
  @IsString()
  @MinLength(1)
  @MaxLength(50_000)
  systemPrompt: string;

  @ApiProperty({ type: [String], description: 'Ids of sites in your vault' })
  @IsArray()
  @ArrayMaxSize(20)
  @IsUUID('all', { each: true })
  siteIds: string[];

  @ApiPropertyOptional({ description: 'Model name (default: DEFAULT_MODEL)' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  model?: string;

  @ApiProperty({ type: TriggerDto })
  @ValidateNested()
  @Type(() => TriggerDto)
  trigger: TriggerDto;
}

export class UpdateAgentDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ maxLength: 50_000 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(50_000)
  systemPrompt?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsUUID('all', { each: true })
  siteIds?: string[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(100)
  model?: string;

  @ApiPropertyOptional({ type: TriggerDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => TriggerDto)
  trigger?: TriggerDto;
}

export class StartRunDto {
  @ApiPropertyOptional({ description: 'What to ask the agent for this run', maxLength: 50_000 })
  @IsOptional()
  @IsString()
  @MaxLength(50_000)
  input?: string;
}
