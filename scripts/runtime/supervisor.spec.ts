import { describe, expect, it } from '@jest/globals';
import { decideAfterCrash, spawnNodeChild, Supervisor, type RestartPolicy } from './supervisor.js';

const policy: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 3_000, windowMs: 60_000, maxCrashes: 6 };

describe('decideAfterCrash: the restart policy', () => {
  it('doubles the delay with each crash within the window, up to the maximum', () => {
    const delays: number[] = [];
    const crashes: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const now = 1_000_000 + i * 1_000;
      crashes.push(now);
      const decision = decideAfterCrash(crashes, now, policy);
      expect(decision.action).toBe('restart');
      delays.push(decision.action === 'restart' ? decision.delayMs : -1);
    }
    expect(delays).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
  });

  it('gives up at the maximum number of crashes within the window', () => {
    const crashes = [0, 1_000, 2_000, 3_000, 4_000, 5_000];
    expect(decideAfterCrash(crashes, 5_000, policy)).toEqual({ action: 'give-up', crashesInWindow: 6 });
  });

  it('forgets crashes older than the window: a child that ran a while starts again from the first delay', () => {
    const crashes = [0, 1_000, 2_000, 3_000, 4_000, 64_500];
    expect(decideAfterCrash(crashes, 64_500, policy)).toEqual({
      action: 'restart',
      delayMs: 500,
      crashesInWindow: 1,
    });
    // Five crashes, but only two within the window: the second delay, no give-up.
    expect(decideAfterCrash([0, 1_000, 2_000, 61_500, 62_000], 62_000, policy)).toMatchObject({
      action: 'restart',
      delayMs: 1_000,
      crashesInWindow: 2,
    });
  });
});

/** A real child process whose life is the script given (node -e). */
function nodeChild(script: string) {
  return async () => spawnNodeChild(['-e', script], { PATH: process.env.PATH }, 2_000);
}

function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) {
        resolve();
      } else if (Date.now() > deadline) {
        reject(new Error('condition not met in time'));
      } else {
        setTimeout(poll, 20);
      }
    };
    poll();
  });
}

describe('Supervisor with real child processes', () => {
  const fast: RestartPolicy = { initialDelayMs: 20, maxDelayMs: 100, windowMs: 30_000, maxCrashes: 3 };

  it('restarts a killed child with a log line while the other keeps running; stop() ends both for good', async () => {
    const lines: string[] = [];
    const supervisor = new Supervisor({
      log: (line) => lines.push(line),
      onGiveUp: () => lines.push('gave up'),
      policy: fast,
    });
    await supervisor.add({ name: 'worker', start: nodeChild('setInterval(() => {}, 1000)') });
    await supervisor.add({ name: 'api', start: nodeChild('setInterval(() => {}, 1000)') });
    const firstWorker = supervisor.pid('worker')!;
    const api = supervisor.pid('api')!;
    process.kill(firstWorker, 'SIGKILL');
    await waitUntil(() => supervisor.pid('worker') !== undefined && supervisor.pid('worker') !== firstWorker);
    expect(supervisor.pid('api')).toBe(api);
    expect(lines).toContain('worker exited (SIGKILL); restarting it in 20 ms (crash 1 of 3 allowed within 30 s)');
    expect(lines.filter((line) => line.startsWith('worker running (pid '))).toHaveLength(2);

    const secondWorker = supervisor.pid('worker')!;
    await supervisor.stop();
    expect(supervisor.pid('worker')).toBeUndefined();
    expect(supervisor.pid('api')).toBeUndefined();
    for (const pid of [secondWorker, api]) {
      expect(() => process.kill(pid, 0)).toThrow();
    }
    expect(lines).not.toContain('gave up');
  });

  it('gives up on a child that keeps crashing, with its last output, and restarts nothing after', async () => {
    let report: string | undefined;
    const lines: string[] = [];
    const supervisor = new Supervisor({
      log: (line) => lines.push(line),
      onGiveUp: (name, text) => (report = `${name}: ${text}`),
      policy: fast,
    });
    await supervisor.add({ name: 'steady', start: nodeChild('setInterval(() => {}, 1000)') });
    await supervisor.add({
      name: 'broken',
      start: nodeChild("console.log('loading settings'); console.error('fatal: port taken'); process.exit(3)"),
    });
    await waitUntil(() => report !== undefined);
    expect(report).toContain('broken: broken exited (code 3): it crashed 3 times within 30 s');
    expect(report).toContain('stopping everything');
    expect(report).toContain('  | loading settings');
    expect(report).toContain('  | fatal: port taken');
    expect(lines.filter((line) => line.startsWith('broken exited (code 3); restarting it in'))).toEqual([
      'broken exited (code 3); restarting it in 20 ms (crash 1 of 3 allowed within 30 s)',
      'broken exited (code 3); restarting it in 40 ms (crash 2 of 3 allowed within 30 s)',
    ]);
    // After giving up, a crash of another child is not restarted either: the stack is stopping.
    const steady = supervisor.pid('steady')!;
    process.kill(steady, 'SIGKILL');
    await waitUntil(() => supervisor.pid('steady') === undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(supervisor.pid('steady')).toBeUndefined();
    await supervisor.stop();
  });

  it('restart() replaces a running instance without counting a crash, and revives a child it gave up on', async () => {
    const lines: string[] = [];
    let gaveUp = false;
    let broken = true;
    const supervisor = new Supervisor({
      log: (line) => lines.push(line),
      onGiveUp: () => (gaveUp = true),
      policy: fast,
    });
    await supervisor.add({ name: 'api', start: nodeChild('setInterval(() => {}, 1000)') });
    const first = supervisor.pid('api')!;
    await supervisor.restart('api');
    const second = supervisor.pid('api')!;
    expect(second).not.toBe(first);
    expect(() => process.kill(first, 0)).toThrow();
    expect(lines.filter((line) => line.includes('restarting'))).toEqual([]);
    // A child whose code is broken (a rebuild with a bug at boot): given up on, then fixed and restarted.
    await supervisor.add({
      name: 'worker',
      start: async () => spawnNodeChild(['-e', broken ? 'process.exit(2)' : 'setInterval(() => {}, 1000)'], {}, 2_000),
    });
    await waitUntil(() => gaveUp);
    broken = false;
    await supervisor.restart('worker');
    expect(supervisor.pid('worker')).toBeDefined();
    // Revived: a crash of the new instance is restarted again.
    const revived = supervisor.pid('worker')!;
    process.kill(revived, 'SIGKILL');
    await waitUntil(() => supervisor.pid('worker') !== undefined && supervisor.pid('worker') !== revived);
    // After shutdown() nothing starts again, not even by restart().
    supervisor.shutdown();
    await supervisor.restart('api');
    await supervisor.stop();
    expect(supervisor.pid('api')).toBeUndefined();
    await expect(supervisor.restart('nobody')).rejects.toThrow('nobody is not supervised');
  });

  it('a start that fails counts as a crash and is retried', async () => {
    let attempts = 0;
    const lines: string[] = [];
    const supervisor = new Supervisor({ log: (line) => lines.push(line), onGiveUp: () => undefined, policy: fast });
    await supervisor.add({
      name: 'flaky',
      start: async () => {
        attempts += 1;
        if (attempts === 2) {
          throw new Error('port not ready');
        }
        return spawnNodeChild(['-e', attempts === 1 ? 'process.exit(1)' : 'setInterval(() => {}, 1000)'], {}, 2_000);
      },
    });
    await waitUntil(() => attempts === 3 && supervisor.pid('flaky') !== undefined);
    expect(lines).toContain(
      'flaky did not start (port not ready); restarting it in 40 ms (crash 2 of 3 allowed within 30 s)',
    );
    await supervisor.stop();
  });
});
