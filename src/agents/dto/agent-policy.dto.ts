import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { Nullable, Optional } from '../../common/optional.js';
import {
  APPROVAL_SCOPES,
  APPROVAL_TIMEOUT,
  type ApprovalScope,
  NOTIFICATION_EVENTS,
  type NotificationEvent,
} from '../../../workflows/contracts.js';

/** Longest notification URL accepted. */
export const NOTIFY_URL_MAX = 2000;

/** An agent's approval policy as the request gives it (`scopes: []` is no policy, as null is). */
export class ApprovalPolicyDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...APPROVAL_SCOPES] },
    uniqueItems: true,
    maxItems: APPROVAL_SCOPES.length,
    description: "The tool scopes whose calls wait for a person's decision; [] means none",
  })
  @IsArray()
  @ArrayMaxSize(APPROVAL_SCOPES.length)
  @ArrayUnique({ message: 'must not list a scope twice' })
  @IsIn(APPROVAL_SCOPES, { each: true })
  scopes: ApprovalScope[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: APPROVAL_TIMEOUT.minSeconds,
    maximum: APPROVAL_TIMEOUT.maxSeconds,
    default: APPROVAL_TIMEOUT.defaultSeconds,
    description: 'How long a call waits for a decision before it is refused (seconds; default 24 h)',
  })
  @Optional()
  @IsInt()
  @Min(APPROVAL_TIMEOUT.minSeconds)
  @Max(APPROVAL_TIMEOUT.maxSeconds)
  timeoutSeconds?: number;
}

/** Where an agent's notifications go, and which. */
export class NotifyDto {
  @ApiProperty({
    maxLength: NOTIFY_URL_MAX,
    example: 'https://hooks.example.com/agentsite',
    description: 'An https:// address on a public host; each notification is POSTed there, signed',
  })
  @IsString()
  @MaxLength(NOTIFY_URL_MAX)
  url: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...NOTIFICATION_EVENTS] },
    minItems: 1,
    uniqueItems: true,
    maxItems: NOTIFICATION_EVENTS.length,
  })
  @IsArray()
  @ArrayNotEmpty({ message: 'must list at least one event' })
  @ArrayMaxSize(NOTIFICATION_EVENTS.length)
  @ArrayUnique({ message: 'must not list an event twice' })
  @IsIn(NOTIFICATION_EVENTS, { each: true })
  events: NotificationEvent[];
}

// Inline schemas, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
const SCOPES_SCHEMA = {
  type: 'array' as const,
  items: { type: 'string' as const, enum: [...APPROVAL_SCOPES] },
  uniqueItems: true,
  maxItems: APPROVAL_SCOPES.length,
};
const EVENTS_SCHEMA = {
  type: 'array' as const,
  items: { type: 'string' as const, enum: [...NOTIFICATION_EVENTS] },
  minItems: 1,
  uniqueItems: true,
  maxItems: NOTIFICATION_EVENTS.length,
};

/** `approvals` in a request: null (or absent on create) is none; PATCH with null removes it. */
export const APPROVALS_REQUEST_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  properties: {
    scopes: SCOPES_SCHEMA,
    timeoutSeconds: {
      type: 'integer',
      minimum: APPROVAL_TIMEOUT.minSeconds,
      maximum: APPROVAL_TIMEOUT.maxSeconds,
      default: APPROVAL_TIMEOUT.defaultSeconds,
    },
  },
  required: ['scopes'],
  selfRequired: false, // optional (ApiPropertyOptional would drop the `required` list above)
  description:
    "Calls of tools of these scopes wait for a person's decision (up to timeoutSeconds, default 24 h, 60 s to 7 days); " +
    'null or scopes [] means none',
};

/** `notify` in a request: null (or absent on create) is none; PATCH with null removes it (and its secret). */
export const NOTIFY_REQUEST_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  properties: { url: { type: 'string', maxLength: NOTIFY_URL_MAX }, events: EVENTS_SCHEMA },
  required: ['url', 'events'],
  selfRequired: false, // optional (ApiPropertyOptional would drop the `required` list above)
  description:
    'Signed POSTs (Standard Webhooks) to an https:// URL on a public host for these events; the signing secret ' +
    'is in the answer of the save that first sets notify (notifySecret) and of its rotation',
};

/** `approvals` in the agent's answer. */
export const APPROVALS_RESPONSE_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  properties: { scopes: { ...SCOPES_SCHEMA, minItems: 1 }, timeoutSeconds: { type: 'integer' } },
  required: ['scopes', 'timeoutSeconds'],
  selfRequired: true,
  description: "The scopes whose calls wait for a person's decision, and how long they wait; null: none",
};

/** `notify` in the agent's answer (never the secret). */
export const NOTIFY_RESPONSE_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  properties: { url: { type: 'string' }, events: EVENTS_SCHEMA },
  required: ['url', 'events'],
  selfRequired: true,
  description: 'Where notifications go and which; null: none',
};

/** The `approvals` property of a create or update body: the request schema, null or a policy. */
export function ApprovalsField(): PropertyDecorator {
  return applyDecorators(
    ApiProperty(APPROVALS_REQUEST_SCHEMA),
    Nullable(),
    IsObject(),
    ValidateNested(),
    Type(() => ApprovalPolicyDto),
  );
}

/** The `notify` property of a create or update body: the request schema, null or an address and events. */
export function NotifyField(): PropertyDecorator {
  return applyDecorators(
    ApiProperty(NOTIFY_REQUEST_SCHEMA),
    Nullable(),
    IsObject(),
    ValidateNested(),
    Type(() => NotifyDto),
  );
}
