import { describe, expect, it } from '@jest/globals';
import { ExpiredCounterSweeper, sweepIntervalFor } from './rate-limit-sweeper.js';

/** A store of `rows` expired rows that records each DELETE's bound. */
function storeOf(rows: number) {
  const calls: number[] = [];
  let left = rows;
  return {
    calls,
    left: () => left,
    store: {
      deleteExpired: (_now: number, max: number) => {
        calls.push(max);
        const n = Math.min(left, max);
        left -= n;
        return Promise.resolve(n);
      },
    },
  };
}

describe('ExpiredCounterSweeper', () => {
  it('deletes in bounded batches until a batch is not full, at most maxBatches statements per sweep', async () => {
    const few = storeOf(25);
    await expect(new ExpiredCounterSweeper(few.store, 1000, { batch: 10 }).sweep()).resolves.toBe(25);
    expect(few.calls).toEqual([10, 10, 10]);

    const many = storeOf(1000);
    const sweeper = new ExpiredCounterSweeper(many.store, 1000, { batch: 10, maxBatches: 4 });
    await expect(sweeper.sweep()).resolves.toBe(40);
    expect(many.calls).toEqual([10, 10, 10, 10]);
    expect(many.left()).toBe(960); // the next sweep goes on
  });

  it('sweeps about twice per window, between 1 s and 30 s', () => {
    expect(sweepIntervalFor(1)).toBe(1000);
    expect(sweepIntervalFor(10)).toBe(5000);
    expect(sweepIntervalFor(60)).toBe(30_000);
    expect(sweepIntervalFor(900)).toBe(30_000);
  });
});
