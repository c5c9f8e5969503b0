import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { Optional } from './optional.js';
import { type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import { AppError } from './app-error.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/**
 * A keyset list's cursor: the sort instant (milliseconds since 1970, at most 15 digits, so always a
 * date PostgreSQL takes) and the id of the last item of the previous page, `<ms>.<uuid>`. Checked
 * by this pattern alone, which the OpenAPI document declares: a cursor that matches is accepted.
 */
export const KEYSET_CURSOR = /^(0|[1-9][0-9]{0,14})\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const CURSOR_MESSAGE = 'cursor is not a cursor returned by this list';

/** `limit`, as every list takes it: an integer from 1 to MAX_PAGE_SIZE. */
export function LimitParam(): PropertyDecorator {
  return (target, key) => {
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })(
      target,
      key,
    );
    Optional()(target, key);
    Type(() => Number)(target, key);
    IsInt()(target, key);
    Min(1)(target, key);
    Max(MAX_PAGE_SIZE)(target, key);
  };
}

/** `cursor`: a list's nextCursor, of the shape `pattern` (declared in the document and checked). */
export function CursorParam(pattern: RegExp): PropertyDecorator {
  return (target, key) => {
    ApiPropertyOptional({ description: 'The nextCursor of the previous page', pattern: pattern.source })(target, key);
    Optional()(target, key);
    IsString()(target, key);
    Matches(pattern, { message: CURSOR_MESSAGE })(target, key);
  };
}

export class ListQueryDto {
  @LimitParam()
  limit?: number;

  @CursorParam(KEYSET_CURSOR)
  cursor?: string;
}

export interface PageQuery {
  limit: number;
  cursor?: Cursor;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Keyset position: the sort instant and id of the last item of the previous page. */
export interface Cursor {
  at: Date;
  id: string;
}

export function pageQuery(dto: ListQueryDto): PageQuery {
  return {
    limit: dto.limit ?? DEFAULT_PAGE_SIZE,
    cursor: dto.cursor === undefined ? undefined : decodeCursor(dto.cursor),
  };
}

export function encodeCursor(cursor: Cursor): string {
  return `${cursor.at.getTime()}.${cursor.id}`;
}

function decodeCursor(raw: string): Cursor {
  if (!KEYSET_CURSOR.test(raw)) {
    throw AppError.validation([{ field: 'cursor', message: CURSOR_MESSAGE }]);
  }
  const dot = raw.indexOf('.');
  return { at: new Date(Number(raw.slice(0, dot))), id: raw.slice(dot + 1) };
}

/** Adds the keyset condition for ascending (created_at, id) order. */
export function keysetWhere<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  alias: string,
  cursor: Cursor | undefined,
  direction: 'ASC' | 'DESC' = 'ASC',
  column = 'created_at',
): void {
  if (cursor === undefined) {
    return;
  }
  const op = direction === 'ASC' ? '>' : '<';
  qb.andWhere(`(${alias}.${column}, ${alias}.id) ${op} (:cursorAt, :cursorId)`, {
    cursorAt: cursor.at,
    cursorId: cursor.id,
  });
}

/** Builds a page from `limit + 1` rows fetched in keyset order. */
export function pageOf<E extends { id: string; createdAt: Date }, T>(
  rows: E[],
  limit: number,
  map: (row: E) => T,
  at: (row: E) => Date = (row) => row.createdAt,
): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    items: items.map(map),
    nextCursor: more && last !== undefined ? encodeCursor({ at: at(last), id: last.id }) : null,
  };
}
