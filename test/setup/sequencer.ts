/**
 * The order jest starts the suites in (jest.config.js `testSequencer`): the longest first, by the
 * durations committed in test/setup/suite-durations.json, so that with two workers no long suite
 * starts near the end of the run and leaves one worker idle while the other finishes it. Jest's own
 * sequencer orders by the durations in its cache, which a fresh clone (CI) does not have: it then
 * orders by file size, and a short file that waits (a retention, a restart) started late.
 *
 * Suites the list does not know (new ones) start first, the larger file first, as jest does with
 * suites it has no time for. `node dist/scripts/suite-durations.js` refreshes the list from the last
 * run's results (.data/jest-results.json).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** What jest hands a sequencer: the file, and the config of its project (rootDir: dist). */
interface SequencedTest {
  path: string;
  context: { config: { rootDir: string } };
  duration?: number;
}

/** Seconds per suite, by path relative to jest's rootDir (dist), e.g. `test/e2e/oauth.e2e-spec.js`. */
export type SuiteDurations = Record<string, number>;

export const DURATIONS_FILE = 'test/setup/suite-durations.json';

/** The committed durations, read from the source tree beside dist/ (an empty list when absent). */
export function readSuiteDurations(rootDir: string): SuiteDurations {
  try {
    return JSON.parse(readFileSync(path.join(rootDir, '..', DURATIONS_FILE), 'utf8')) as SuiteDurations;
  } catch {
    return {};
  }
}

/** Unknown suites first (larger file first), then the known ones, longest first; ties by path. */
export function orderSuites<T extends SequencedTest>(tests: readonly T[], known: SuiteDurations): T[] {
  const keyed = tests.map((test) => {
    const seconds = known[path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/')];
    return { test, seconds, size: seconds === undefined ? fileSize(test.path) : 0 };
  });
  keyed.sort((a, b) => {
    if ((a.seconds === undefined) !== (b.seconds === undefined)) {
      return a.seconds === undefined ? -1 : 1;
    }
    const byLength = a.seconds === undefined ? b.size - a.size : b.seconds! - a.seconds!;
    return byLength !== 0 ? byLength : a.test.path < b.test.path ? -1 : 1;
  });
  return keyed.map(({ test, seconds }) => {
    // Jest reads `duration` (ms) to tell a slow suite when it starts it.
    if (seconds !== undefined) {
      test.duration = seconds * 1000;
    }
    return test;
  });
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export default class LongestFirstSequencer {
  sort<T extends SequencedTest>(tests: T[]): T[] {
    if (tests.length === 0) {
      return tests;
    }
    return orderSuites(tests, readSuiteDurations(tests[0]!.context.config.rootDir));
  }

  /** Nothing to keep between runs: the committed list is the one source of the order. */
  cacheResults(): void {}

  /** `--onlyFailures` is not offered with this sequencer: it keeps no record of failures. */
  allFailedTests<T>(): T[] {
    throw new Error('--onlyFailures needs a record of failed suites, which this sequencer does not keep');
  }
}
