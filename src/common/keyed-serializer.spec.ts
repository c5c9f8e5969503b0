import { describe, expect, it } from '@jest/globals';
import { KeyedSerializer } from './keyed-serializer.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('KeyedSerializer', () => {
  it('runs the tasks of one key one at a time, in order, and other keys meanwhile', async () => {
    const serializer = new KeyedSerializer();
    const events: string[] = [];
    const gate = deferred();
    const first = serializer.run('a', async () => {
      events.push('a1 start');
      await gate.promise;
      events.push('a1 end');
      return 1;
    });
    const second = serializer.run('a', async () => {
      events.push('a2 start');
      return 2;
    });
    const other = serializer.run('b', async () => {
      events.push('b1');
      return 3;
    });
    expect(await other).toBe(3);
    expect(events).toEqual(['a1 start', 'b1']);
    gate.resolve();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(events).toEqual(['a1 start', 'b1', 'a1 end', 'a2 start']);
  });

  it('goes on after a failed task, which its caller sees, and forgets a key once it is idle', async () => {
    const serializer = new KeyedSerializer();
    const failed = serializer.run('a', async () => {
      throw new Error('boom');
    });
    const next = serializer.run('a', async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('next');
    await new Promise((resolve) => setImmediate(resolve));
    expect(serializer.busyKeys).toBe(0);
  });
});
