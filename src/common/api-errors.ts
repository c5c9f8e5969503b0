import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiHeader, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from './error-codes.js';
import { INTERNAL_ERROR_CODE } from './error-filter.js';

/** One invalid field of a VALIDATION_ERROR (or MANIFEST_INVALID, WEBHOOK_PAYLOAD_INVALID) answer. */
export class FieldProblemDto {
  @ApiProperty({ example: 'email', description: 'The path of the field: `email`, `trigger.cron`, `schema[2].type`' })
  field!: string;

  @ApiProperty({ example: 'must be an email address' })
  message!: string;
}

/** The body of every error answer (see AppError.toBody and the error filter). */
export class ErrorBodyDto {
  @ApiProperty({ description: 'A human-readable message', example: 'Authentication required' })
  error!: string;

  @ApiProperty({
    description: 'A code of the specification (INTERNAL_ERROR only for an unexpected failure)',
    enum: [...ERROR_CODES, INTERNAL_ERROR_CODE],
    enumName: 'ErrorCode',
  })
  code!: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status, repeated', example: 401 })
  statusCode!: number;

  @ApiPropertyOptional({ type: [FieldProblemDto], description: 'The invalid fields, one entry each' })
  details?: FieldProblemDto[];
}

/** @nestjs/swagger's metadata key for a handler's responses (DECORATORS.API_RESPONSE, not exported). */
const API_RESPONSE = 'swagger/apiResponse';
/** The codes ApiErrors has declared on a handler, so that several uses add up. */
const ERROR_CODES_KEY = Symbol('agentsite:apiErrorCodes');

interface ResponseEntry {
  description: string;
  schema: Record<string, unknown>;
  headers?: Record<string, unknown>;
}

/** 429 answers always say when to try again. */
const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
};

function responseFor(status: number, codes: ErrorCode[]): ResponseEntry {
  return {
    ...(status === 429 ? { headers: RETRY_AFTER } : {}),
    description: codes.map((code) => `\`${code}\``).join(', '),
    schema: {
      allOf: [
        { $ref: getSchemaPath(ErrorBodyDto) },
        { type: 'object', properties: { code: { type: 'string', enum: codes } } },
      ],
    },
  };
}

/** Adds `codes` to one handler's declared error responses: one response per HTTP status. */
function declareOn(handler: object, codes: readonly ErrorCode[]): void {
  const known = (Reflect.getMetadata(ERROR_CODES_KEY, handler) as ErrorCode[] | undefined) ?? [];
  const all = [...new Set([...known, ...codes])];
  Reflect.defineMetadata(ERROR_CODES_KEY, all, handler);
  const responses = { ...((Reflect.getMetadata(API_RESPONSE, handler) as Record<string, unknown> | undefined) ?? {}) };
  const statuses = new Set(codes.map((code) => ERROR_STATUS[code]));
  for (const status of statuses) {
    responses[String(status)] = responseFor(
      status,
      all.filter((code) => ERROR_STATUS[code] === status),
    );
  }
  Reflect.defineMetadata(API_RESPONSE, responses, handler);
}

/**
 * Declares the error answers a route can give: one response per distinct HTTP status of `codes`,
 * its description listing the codes and its schema ErrorBodyDto with `code` narrowed to them.
 * On a controller it applies to each of its routes, adding to what the route declares itself
 * (Swagger would otherwise let a route's 401 hide the controller's 401).
 */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const models = ApiExtraModels(ErrorBodyDto, FieldProblemDto);
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) {
      models(target, key!, descriptor);
      declareOn(descriptor.value as object, codes);
      return descriptor;
    }
    const ctor = target as { prototype: object };
    models(ctor as never);
    for (const name of Object.getOwnPropertyNames(ctor.prototype)) {
      const handler = Object.getOwnPropertyDescriptor(ctor.prototype, name)?.value as unknown;
      if (name !== 'constructor' && typeof handler === 'function' && Reflect.hasMetadata('path', handler)) {
        declareOn(handler, codes);
      }
    }
    return target;
  }) as MethodDecorator & ClassDecorator;
}

/** The header that selects a Team workspace (src/workspaces/scope.ts WORKSPACE_HEADER). */
export const WORKSPACE_HEADER_NAME = 'X-Workspace-Id';

/**
 * For routes that honour X-Workspace-Id (WorkspaceScopeGuard): the optional header, and the two
 * answers the guard gives for it. On a controller, apply it after (above) the routes' own decorators.
 */
export function ApiWorkspaceHeader(description = 'Act in this Team workspace instead of your own account') {
  return applyDecorators(
    ApiHeader({
      name: WORKSPACE_HEADER_NAME,
      required: false,
      description,
      schema: { type: 'string', format: 'uuid' },
    }),
    ApiErrors('WORKSPACE_NOT_FOUND', 'WORKSPACE_REQUIRED'),
  );
}

/** The answers every authenticated route can give before its own code runs (JwtAuthGuard). */
// WorkspaceScopeGuard is global: it checks an X-Workspace-Id header on every signed-in route, even
// on one that does not act on a workspace.
// PERMISSION_DENIED: a request signed in by the console's session cookie that changes state without
// its CSRF token (src/auth/console-session.ts).
export const AUTH_ERRORS: readonly ErrorCode[] = [
  'UNAUTHORIZED',
  'TOKEN_EXPIRED',
  'TOKEN_REVOKED',
  'INVALID_TOKEN',
  'PERMISSION_DENIED',
  'RATE_LIMITED',
  'WORKSPACE_NOT_FOUND',
  'WORKSPACE_REQUIRED',
];
