import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { anyJson } from '../../common/api-schemas.js';
import { APPROVAL_SCOPES, type ApprovalScope, type RunTrigger } from '../../../workflows/contracts.js';

// The entries timeline.ts (and runs.service.ts for runs without a history) writes, one class per `type`.

export const RUN_TRIGGERS = ['manual', 'schedule', 'webhook'] as const satisfies readonly RunTrigger[];

class EntryBase {
  @ApiProperty({ format: 'date-time' })
  at: string;
}

export class TriggeredEntryDto extends EntryBase {
  @ApiProperty({ enum: ['triggered'] })
  type: 'triggered';

  @ApiPropertyOptional({ enum: RUN_TRIGGERS })
  triggeredBy?: RunTrigger;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Webhook runs: the payload',
  })
  payload?: unknown;

  @ApiPropertyOptional({ description: 'Manual runs: what the agent was asked' })
  input?: string;

  @ApiPropertyOptional({ enum: ['webhook_action'], description: "The payload's action replaced the system prompt" })
  systemPromptSource?: 'webhook_action';
}

export class ModelTurnUsageDto {
  @ApiPropertyOptional({ type: 'integer' })
  inputTokens?: number;

  @ApiPropertyOptional({ type: 'integer' })
  outputTokens?: number;

  @ApiPropertyOptional({ type: 'integer' })
  credits?: number;
}

export class ModelTurnEntryDto extends EntryBase {
  @ApiProperty({ enum: ['model_turn'] })
  type: 'model_turn';

  @ApiProperty({ description: "The model's text in this turn" })
  text: string;

  @ApiPropertyOptional({ example: 'tool_use' })
  stopReason?: string;

  @ApiProperty({ type: ModelTurnUsageDto })
  usage: ModelTurnUsageDto;

  @ApiProperty({ type: 'integer', description: 'How many tools the model asked to call' })
  toolUses: number;
}

export class ToolCallEntryDto extends EntryBase {
  @ApiProperty({ enum: ['tool_call'] })
  type: 'tool_call';

  @ApiProperty({ description: "The site's name" })
  site: string;

  @ApiProperty({ format: 'uuid' })
  siteId: string;

  @ApiProperty()
  tool: string;

  @ApiProperty(anyJson("The tool's input"))
  input: unknown;
}

export class ToolResultEntryDto extends EntryBase {
  @ApiProperty({ enum: ['tool_result'] })
  type: 'tool_result';

  @ApiProperty()
  site: string;

  @ApiProperty()
  tool: string;

  @ApiProperty()
  ok: boolean;

  @ApiPropertyOptional(
    anyJson(
      "ok: the site's JSON result; with `truncated`, the first 65,536 bytes of its JSON text (a string), which is what the run kept and the model was shown. An MCP server's tool: `{content, structuredContent?}`; with `truncated`, the content blocks that fit in 65,536 bytes (the one that reaches the limit cut, those left out named in a text block)",
    ),
  )
  result?: unknown;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      "ok: present when the site's answer was longer than a run keeps (65,536 bytes of JSON): its length in bytes",
  })
  truncated?: number;

  @ApiPropertyOptional({ description: 'ok: milliseconds' })
  durationMs?: number;

  @ApiPropertyOptional({ description: 'Not ok: the message' })
  error?: string;

  @ApiPropertyOptional({ description: 'Not ok: the error code' })
  code?: string;

  @ApiProperty({ type: 'integer', description: 'Which attempt this was (retries are counted)' })
  attempt: number;
}

export class WaitingEntryDto extends EntryBase {
  @ApiProperty({ enum: ['waiting'] })
  type: 'waiting';

  @ApiProperty({ example: 'rate_limited', description: 'rate_limited (a Retry-After), or the timer summary' })
  reason: string;

  @ApiProperty({ format: 'date-time' })
  until: string;
}

export class TokenRefreshedEntryDto extends EntryBase {
  @ApiProperty({ enum: ['token_refreshed'] })
  type: 'token_refreshed';

  @ApiProperty()
  site: string;
}

export class CompletedEntryDto extends EntryBase {
  @ApiProperty({ enum: ['completed'] })
  type: 'completed';

  @ApiProperty({ description: 'The final answer' })
  output: string;
}

export class FailedEntryDto extends EntryBase {
  @ApiProperty({ enum: ['failed'] })
  type: 'failed';

  @ApiProperty()
  error: string;

  @ApiProperty({ description: 'A code of the specification, INTERNAL_ERROR, TERMINATED or TIMED_OUT' })
  code: string;
}

export class CancelledEntryDto extends EntryBase {
  @ApiProperty({ enum: ['cancelled'] })
  type: 'cancelled';
}

export class ApprovalRequestedEntryDto extends EntryBase {
  @ApiProperty({ enum: ['approval_requested'] })
  type: 'approval_requested';

  @ApiProperty({ format: 'uuid' })
  approvalId: string;

  @ApiProperty({ description: "The site's name" })
  site: string;

  @ApiProperty({ format: 'uuid' })
  siteId: string;

  @ApiProperty()
  tool: string;

  @ApiProperty(anyJson("The call's input, as the model asked for it"))
  input: unknown;

  @ApiProperty({ enum: APPROVAL_SCOPES, description: 'The scope the call needs, one the agent’s policy lists' })
  scope: ApprovalScope;

  @ApiProperty({ format: 'date-time', description: 'When the call is refused if nobody has decided' })
  expiresAt: string;
}

export class ApprovalDeciderDto {
  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ description: "The person's name, else their email" })
  name: string;
}

export const APPROVAL_DECISIONS = ['approve', 'deny', 'expired', 'cancelled'] as const;

export class ApprovalDecidedEntryDto extends EntryBase {
  @ApiProperty({ enum: ['approval_decided'] })
  type: 'approval_decided';

  @ApiProperty({ format: 'uuid' })
  approvalId: string;

  @ApiProperty({
    enum: APPROVAL_DECISIONS,
    description:
      'approve (the call is made), deny, expired (nobody decided in time; the model is told it was not approved) or cancelled (the run was cancelled while it waited)',
  })
  decision: (typeof APPROVAL_DECISIONS)[number];

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: {
      userId: { type: 'string', format: 'uuid' },
      name: { type: 'string', description: "The person's name, else their email" },
    },
    required: ['userId', 'name'],
    selfRequired: true,
    description: 'Who decided; null when it expired or was cancelled',
  })
  by: ApprovalDeciderDto | null;

  @ApiProperty({ type: 'string', nullable: true })
  note: string | null;
}

export class HistoryUnavailableEntryDto extends EntryBase {
  @ApiProperty({ enum: ['history_unavailable'] })
  type: 'history_unavailable';

  @ApiProperty({
    description:
      "Why the steps between the trigger and the end are missing: Temporal no longer keeps the run's history and no copy was archived",
  })
  message: string;
}

const ENTRIES = {
  triggered: TriggeredEntryDto,
  model_turn: ModelTurnEntryDto,
  tool_call: ToolCallEntryDto,
  tool_result: ToolResultEntryDto,
  waiting: WaitingEntryDto,
  token_refreshed: TokenRefreshedEntryDto,
  completed: CompletedEntryDto,
  failed: FailedEntryDto,
  cancelled: CancelledEntryDto,
  approval_requested: ApprovalRequestedEntryDto,
  approval_decided: ApprovalDecidedEntryDto,
  history_unavailable: HistoryUnavailableEntryDto,
};

export const TIMELINE_ENTRY_MODELS = Object.values(ENTRIES);

/** A timeline entry: one of the classes above, told apart by `type`. */
export const TIMELINE_ENTRY_SCHEMA = {
  oneOf: TIMELINE_ENTRY_MODELS.map((model) => ({ $ref: getSchemaPath(model) })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(Object.entries(ENTRIES).map(([type, model]) => [type, getSchemaPath(model)])),
  },
};
