import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { statementText } from '../common/database/prepared-statement.js';

/** How much of a statement's text a line quotes: enough to tell which statement it was. */
const STATEMENT_CHARS = 160;

/**
 * What a failed statement's error may say in a log: its SQLSTATE and the names PostgreSQL reports
 * (table, column, constraint). Never the error's message or detail, which quote the values that
 * failed (`invalid input syntax for type integer: "…"`, `Key (email)=(…) already exists`).
 */
export function databaseErrorFacts(error: unknown): string {
  const e = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const facts = ['code', 'table', 'column', 'constraint']
    .filter((key) => typeof e[key] === 'string' && e[key] !== '')
    .map((key) => `${key} ${String(e[key])}`);
  return facts.length > 0 ? facts.join(', ') : error instanceof Error ? error.name : 'unknown error';
}

/** The statement's text, whitespace folded, cut short. Parameters are never part of it. */
function statementOf(query: string): string {
  const text = statementText(query).replace(/\s+/g, ' ').trim();
  return text.length > STATEMENT_CHARS ? `${text.slice(0, STATEMENT_CHARS)}…` : text;
}

/**
 * TypeORM's logger for the API, the worker and the migrations. TypeORM's own (`logging: ['error']`)
 * prints every failed statement with its parameters: a chat message, a run's payload or a sealed
 * credential would reach the log whenever PostgreSQL refused or dropped a statement. This one writes
 * through the process's JSON logger (context `Database`) and names the statement and the error's
 * SQLSTATE, never a parameter nor the error's message.
 */
export class DatabaseLogger implements TypeOrmLogger {
  private readonly logger = new Logger('Database');

  logQuery(): void {
    // Statements are not logged one by one (the access log and the metrics time requests).
  }

  logQueryError(error: string | Error, query: string): void {
    this.logger.error(`statement failed (${databaseErrorFacts(error)}): ${statementOf(query)}`);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow statement (${time} ms): ${statementOf(query)}`);
  }

  logSchemaBuild(message: string): void {
    this.logger.log(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') {
      this.logger.warn(String(message));
    } else {
      this.logger.log(String(message));
    }
  }
}
