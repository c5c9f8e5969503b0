import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiHeader, ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from './error-codes.js';

class FieldProblemDto {
  @ApiProperty({ description: 'The path of the field: `email`, `trigger.cron`, `schema[2].type`' })
  field: string;

  @ApiProperty()
  message: string;
}

/** The body of every error answer: `{error, code, statusCode}` (field details on validation errors). */
export class ErrorBodyDto {
  @ApiProperty({ description: 'A human-readable message' })
  error: string;

  @ApiProperty({ enum: ERROR_CODES, description: 'A code of the specification' })
  code: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status of the answer' })
  statusCode: number;

  @ApiPropertyOptional({
    type: [FieldProblemDto],
    description: 'VALIDATION_ERROR, WEBHOOK_PAYLOAD_INVALID and MANIFEST_INVALID: every invalid field',
  })
  details?: FieldProblemDto[];
}

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' as const } },
};

/** One error response per distinct HTTP status of the codes, each listing the codes it may carry. */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(
    ...[...byStatus].map(([status, listed]) =>
      ApiResponse({
        status,
        description: `Error codes: ${listed.join(', ')}`,
        type: ErrorBodyDto,
        // 429 answers always say when to try again.
        ...(status === HttpStatus.TOO_MANY_REQUESTS ? { headers: RETRY_AFTER } : {}),
      }),
    ),
  );
}

/** The optional X-Workspace-Id header: the request acts on that Team workspace's resources. */
export function ApiWorkspaceHeader(): MethodDecorator & ClassDecorator {
  return ApiHeader({
    // The header WorkspaceScopeGuard reads (workspaces/scope.ts WORKSPACE_HEADER; common imports no feature).
    name: 'x-workspace-id',
    required: false,
    description:
      "Act on this Team workspace's resources, with your role there (WORKSPACE_NOT_FOUND if you are not a member)",
    schema: { type: 'string', format: 'uuid' },
  });
}
