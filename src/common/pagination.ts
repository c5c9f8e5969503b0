import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { Optional } from './optional.js';
import { type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import { AppError } from './app-error.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export class ListQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @Optional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @Optional()
  @IsString()
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
  return Buffer.from(`${cursor.at.toISOString()}|${cursor.id}`).toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  const [at, id] = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  const date = new Date(at ?? '');
  if (!id || Number.isNaN(date.getTime()) || !/^[0-9a-f-]{36}$/i.test(id)) {
    throw AppError.validation([{ field: 'cursor', message: 'is not a cursor returned by this list' }]);
  }
  return { at: date, id };
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
