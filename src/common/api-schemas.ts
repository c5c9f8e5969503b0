import type { Type } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import type { ErrorCode } from './error-codes.js';
import type { Page } from './pagination.js';

/**
 * A property that holds any JSON value (a tool's result, a tool call's input): `anyOf` an empty
 * schema, so the document says "anything" instead of the `object` the TypeScript type `unknown` maps to.
 */
export function anyJson(description: string): ApiPropertyOptions {
  return { description, anyOf: [{}] };
}

/** The page class of a list of `item`s (`{items, nextCursor}`), named for the document. */
export function PageDto<T>(item: Type<T>): Type<Page<T>> {
  class PageOf implements Page<T> {
    @ApiProperty({ type: () => [item] })
    items: T[];

    @ApiProperty({
      type: String,
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last page',
    })
    nextCursor: string | null;
  }
  return PageOf;
}

/**
 * What the guards in front of every signed-in route can answer: authentication (PERMISSION_DENIED: a
 * state change by the console's session cookie without its CSRF token), the rate limits,
 * X-Workspace-Id (WorkspaceScopeGuard), and a body or path that cannot be read (VALIDATION_ERROR).
 */
export const SIGNED_IN_ERRORS = [
  'UNAUTHORIZED',
  'TOKEN_EXPIRED',
  'TOKEN_REVOKED',
  'INVALID_TOKEN',
  'PERMISSION_DENIED',
  'RATE_LIMITED',
  'WORKSPACE_NOT_FOUND',
  'WORKSPACE_REQUIRED',
  'VALIDATION_ERROR',
] as const satisfies readonly ErrorCode[];

/** SIGNED_IN_ERRORS and the terms step (routes marked @TermsRequired()). */
export const TERMS_GATED_ERRORS = [...SIGNED_IN_ERRORS, 'TERMS_NOT_ACCEPTED'] as const satisfies readonly ErrorCode[];

/** A public route: the per-address rate limit and an unreadable body or path. */
export const PUBLIC_ERRORS = ['RATE_LIMITED', 'VALIDATION_ERROR'] as const satisfies readonly ErrorCode[];
