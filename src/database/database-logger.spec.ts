import { describe, expect, it } from '@jest/globals';
import { Logger, type LoggerService } from '@nestjs/common';
import { DatabaseLogger, databaseErrorFacts } from './database-logger.js';
import { preparedStatement } from '../common/database/prepared-statement.js';

describe('DatabaseLogger', () => {
  it("names a failed statement's SQLSTATE and PostgreSQL's names, never its message, detail or parameters", () => {
    const lines: Array<[string, string]> = [];
    const capture: LoggerService = {
      log: (message: string) => void lines.push(['log', message]),
      error: (message: string) => void lines.push(['error', message]),
      warn: (message: string) => void lines.push(['warn', message]),
    };
    Logger.overrideLogger(capture);
    try {
      const error = Object.assign(new Error('duplicate key value: Key (email)=(ada@example.com) already exists'), {
        code: '23505',
        table: 'users',
        constraint: 'UQ_users_email',
        detail: 'Key (email)=(ada@example.com) already exists.',
      });
      new DatabaseLogger().logQueryError(error, 'INSERT INTO users (email, password_hash)\n   VALUES ($1, $2)');
      new DatabaseLogger().logQuerySlow(1200, `SELECT ${'x, '.repeat(100)}1`);
    } finally {
      Logger.overrideLogger(['error', 'warn', 'log']);
    }
    expect(lines[0]).toEqual([
      'error',
      'statement failed (code 23505, table users, constraint UQ_users_email): INSERT INTO users (email, password_hash) VALUES ($1, $2)',
    ]);
    expect(lines[0]![1]).not.toContain('ada@example.com');
    expect(lines[1]![0]).toBe('warn');
    expect(lines[1]![1]).toMatch(/^slow statement \(1200 ms\): SELECT x, x, .*…$/);
    expect(lines[1]![1].length).toBeLessThan(220);
  });

  it("quotes a prepared statement's text, not its config object", () => {
    const lines: string[] = [];
    Logger.overrideLogger({ log: () => undefined, warn: () => undefined, error: (m: string) => void lines.push(m) });
    try {
      new DatabaseLogger().logQueryError(
        Object.assign(new Error('boom'), { code: '57014' }),
        preparedStatement('chat_turn_by_id', 'SELECT 1\n  FROM chat_sessions WHERE id = $1'),
      );
    } finally {
      Logger.overrideLogger(['error', 'warn', 'log']);
    }
    expect(lines).toEqual(['statement failed (code 57014): SELECT 1 FROM chat_sessions WHERE id = $1']);
  });

  it('falls back to the error class when PostgreSQL reported nothing', () => {
    expect(databaseErrorFacts(new TypeError('Connection terminated: secret'))).toBe('TypeError');
    expect(databaseErrorFacts('a string')).toBe('unknown error');
  });
});
