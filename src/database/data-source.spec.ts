import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadSettings } from '../config/settings.js';
import { dataSourceOptions } from './data-source.js';

const base = {
  DATA_DIR: mkdtempSync(path.join(tmpdir(), 'data-source-')),
  JWT_SECRET: 'x'.repeat(40),
  VAULT_KEY: Buffer.alloc(32, 7).toString('base64'),
};

function poolMax(env: Record<string, string>): unknown {
  return (dataSourceOptions(loadSettings({ ...base, ...env })) as { extra?: { max?: unknown } }).extra?.max;
}

describe('dataSourceOptions', () => {
  it("sizes each process's pool from DATABASE_POOL_MAX, 20 by default", () => {
    expect(poolMax({})).toBe(20);
    // Many processes on one PostgreSQL: each takes a smaller share of max_connections.
    expect(poolMax({ DATABASE_POOL_MAX: '8' })).toBe(8);
  });

  it('refuses a pool size that is not a whole number from 2 to 1000, naming the setting', () => {
    for (const bad of ['0', '1', '1001', 'many', '2.5']) {
      expect(() => poolMax({ DATABASE_POOL_MAX: bad })).toThrow(/DATABASE_POOL_MAX/);
    }
  });
});
