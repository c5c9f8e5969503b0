import { describe, expect, it } from '@jest/globals';
import { hasRecentPoller, judgePollers, timestampMs } from './poller-health.js';

describe('judgePollers: is the worker of this host polling?', () => {
  const now = 1_800_000_000_000;

  it('healthy when a poller of this host polled within the limit (the newest one counts)', () => {
    const verdict = judgePollers(
      [
        { identity: '7@other-host', lastAccessMs: now - 1_000 },
        { identity: '1@c0ffee', lastAccessMs: now - 200_000 },
        { identity: '1@c0ffee', lastAccessMs: now - 65_000 },
      ],
      'c0ffee',
      now,
      120_000,
    );
    expect(verdict).toEqual({ healthy: true, identity: '1@c0ffee', ageMs: 65_000 });
  });

  it("unhealthy when only other hosts' workers poll (a host name is matched whole, after the @)", () => {
    const verdict = judgePollers(
      [
        { identity: '7@other-host', lastAccessMs: now },
        { identity: '9@xc0ffee', lastAccessMs: now },
      ],
      'c0ffee',
      now,
      120_000,
    );
    expect(verdict).toEqual({ healthy: false, reason: 'no worker on c0ffee has polled this task queue' });
    expect(judgePollers([], 'c0ffee', now, 120_000).healthy).toBe(false);
  });

  it('unhealthy when its last poll is older than the limit (it cannot poll any more)', () => {
    const verdict = judgePollers([{ identity: '1@c0ffee', lastAccessMs: now - 121_000 }], 'c0ffee', now, 120_000);
    expect(verdict).toEqual({
      healthy: false,
      reason: 'the last poll of 1@c0ffee was 121 s ago (more than 120 s)',
    });
    expect(judgePollers([{ identity: '1@c0ffee', lastAccessMs: undefined }], 'c0ffee', now, 120_000).healthy).toBe(
      false,
    );
  });

  it('reads protobuf timestamps with Long or number seconds', () => {
    expect(timestampMs({ seconds: { toNumber: () => 1_800_000_000 }, nanos: 250_000_000 })).toBe(1_800_000_000_250);
    expect(timestampMs({ seconds: 5, nanos: null })).toBe(5_000);
    expect(timestampMs(null)).toBeUndefined();
  });
});

describe('hasRecentPoller: does any worker (or the one named) poll?', () => {
  const now = 1_800_000_000_000;
  const pollers = [
    { identity: '7@a', lastAccessMs: now - 200_000 },
    { identity: '8@b', lastAccessMs: now - 30_000 },
    { identity: '9@c', lastAccessMs: undefined },
  ];

  it('counts a poller whose last poll is within the limit, any or the named one', () => {
    expect(hasRecentPoller(pollers, now, 120_000)).toBe(true);
    expect(hasRecentPoller(pollers, now, 120_000, '8@b')).toBe(true);
  });

  it('does not count a stopped worker once its last poll is too old, nor one never seen', () => {
    expect(hasRecentPoller(pollers, now, 120_000, '7@a')).toBe(false);
    expect(hasRecentPoller(pollers, now, 120_000, '9@c')).toBe(false);
    expect(hasRecentPoller(pollers, now, 120_000, '1@elsewhere')).toBe(false);
    expect(hasRecentPoller(pollers, now, 20_000)).toBe(false);
    expect(hasRecentPoller([], now, 120_000)).toBe(false);
  });
});
