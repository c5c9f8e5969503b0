import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import LongestFirstSequencer, { orderSuites, readSuiteDurations } from './sequencer.js';

const root = process.cwd();

describe('the suites start longest first (test/setup/sequencer.ts)', () => {
  it('orders by the committed seconds, longest first; suites the list does not know first, the larger file first', () => {
    const dist = mkdtempSync(path.join(tmpdir(), 'sequencer-'));
    const file = (name: string, bytes: number) => {
      writeFileSync(path.join(dist, name), 'x'.repeat(bytes));
      return { path: path.join(dist, name), context: { config: { rootDir: dist } } } as {
        path: string;
        context: { config: { rootDir: string } };
        duration?: number;
      };
    };
    const short = file('short.e2e-spec.js', 9000);
    const long = file('long.e2e-spec.js', 10);
    const middle = file('middle.e2e-spec.js', 10);
    const newSmall = file('new-small.e2e-spec.js', 100);
    const newLarge = file('new-large.e2e-spec.js', 5000);
    const ordered = orderSuites([short, newSmall, middle, long, newLarge], {
      'short.e2e-spec.js': 2,
      'long.e2e-spec.js': 150.5,
      'middle.e2e-spec.js': 40,
    });
    expect(ordered.map((test) => path.basename(test.path))).toEqual([
      'new-large.e2e-spec.js',
      'new-small.e2e-spec.js',
      'long.e2e-spec.js',
      'middle.e2e-spec.js',
      'short.e2e-spec.js',
    ]);
    // Jest's own estimate and slow-suite notices read `duration` (ms).
    expect(long.duration).toBe(150_500);
    expect(newLarge.duration).toBeUndefined();
  });

  it('the committed list is read from beside dist/ and names only suites that exist', () => {
    const known = readSuiteDurations(path.join(root, 'dist'));
    expect(Object.keys(known).length).toBeGreaterThan(50);
    for (const [suite, seconds] of Object.entries(known)) {
      expect({ suite, exists: existsSync(path.join(root, suite.replace(/\.js$/, '.ts'))) }).toEqual({
        suite,
        exists: true,
      });
      expect(seconds).toBeGreaterThanOrEqual(0);
    }
    expect(new LongestFirstSequencer().sort([])).toEqual([]);
  });
});
