import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import { loadSettings, SettingsError } from './settings.js';
import { DEFAULT_POLL_MAX_AGE_MS } from '../temporal/poller-health.js';
import {
  DEFAULT_WORKER_POLL_MAX_AGE_SECONDS,
  DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS,
  LONGEST_ACTIVITY_TIMEOUT_SECONDS,
} from './worker-shutdown.js';

const root = process.cwd();
const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  seconds: 1,
  minute: 60,
  minutes: 60,
  hour: 3600,
  hours: 3600,
};

/** Every startToCloseTimeout written in workflows/*.ts, in seconds. */
function activityTimeouts(): number[] {
  const dir = path.join(root, 'workflows');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .flatMap((file) => [...readFileSync(path.join(dir, file), 'utf8').matchAll(/startToCloseTimeout:\s*([^,\n}]+)/g)])
    .map((match) => {
      const text = match[1]!.trim();
      const duration = /^'(\d+) (\w+)'$/.exec(text);
      if (duration === null || UNIT_SECONDS[duration[2]!] === undefined) {
        throw new Error(`startToCloseTimeout ${text}: write it as 'N seconds|minutes|hours' so this check can read it`);
      }
      return Number(duration[1]) * UNIT_SECONDS[duration[2]!]!;
    });
}

const settingsWith = (grace?: string) =>
  loadSettings({
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'grace-')),
    ...(grace === undefined ? {} : { WORKER_SHUTDOWN_GRACE_SECONDS: grace }),
  });

describe('the worker drains on SIGTERM for longer than any activity may run', () => {
  it('LONGEST_ACTIVITY_TIMEOUT_SECONDS is the longest startToCloseTimeout in workflows/', () => {
    const timeouts = activityTimeouts();
    expect(timeouts.length).toBeGreaterThan(3);
    expect(Math.max(...timeouts)).toBe(LONGEST_ACTIVITY_TIMEOUT_SECONDS);
  });

  it('WORKER_SHUTDOWN_GRACE_SECONDS defaults above the longest activity; at or below it is refused', () => {
    expect(settingsWith().workerShutdownGraceSeconds).toBe(DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS);
    expect(DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS).toBeGreaterThan(LONGEST_ACTIVITY_TIMEOUT_SECONDS);
    expect(settingsWith('600').workerShutdownGraceSeconds).toBe(600);
    for (const wrong of [String(LONGEST_ACTIVITY_TIMEOUT_SECONDS), '10', '0', '-1', '5.5', 'soon', '86401']) {
      expect(() => settingsWith(wrong)).toThrow(SettingsError);
      expect(() => settingsWith(wrong)).toThrow(
        /WORKER_SHUTDOWN_GRACE_SECONDS must be a whole number of seconds above 300/,
      );
    }
  });

  it("compose gives the worker longer than its grace before it kills it, and .env.example's value is the default", () => {
    const compose = YAML.parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { stop_grace_period?: string }>;
    };
    const period = /^(\d+)s$/.exec(compose.services.worker!.stop_grace_period ?? '');
    expect(period).not.toBeNull();
    expect(Number(period![1])).toBeGreaterThan(DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS);
    const example = /^WORKER_SHUTDOWN_GRACE_SECONDS=(\d*)$/m.exec(
      readFileSync(path.join(root, '.env.example'), 'utf8'),
    );
    expect(example?.[1]).toBe(String(DEFAULT_WORKER_SHUTDOWN_GRACE_SECONDS));
  });
});

describe("WORKER_POLL_MAX_AGE_SECONDS: how old a worker's last poll may be for readiness", () => {
  const withAge = (age: string) =>
    loadSettings({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'poll-age-')), WORKER_POLL_MAX_AGE_SECONDS: age });

  it("defaults to the health check's two minutes (.env.example's value), takes 5 to 3600 s, refuses the rest", () => {
    expect(settingsWith().workerPollMaxAgeSeconds).toBe(DEFAULT_WORKER_POLL_MAX_AGE_SECONDS);
    expect(DEFAULT_WORKER_POLL_MAX_AGE_SECONDS * 1000).toBe(DEFAULT_POLL_MAX_AGE_MS);
    expect(
      /^WORKER_POLL_MAX_AGE_SECONDS=(\d*)$/m.exec(readFileSync(path.join(root, '.env.example'), 'utf8'))?.[1],
    ).toBe(String(DEFAULT_WORKER_POLL_MAX_AGE_SECONDS));
    expect(withAge('15').workerPollMaxAgeSeconds).toBe(15);
    for (const wrong of ['4', '0', '3601', 'soon']) {
      expect(() => withAge(wrong)).toThrow(/WORKER_POLL_MAX_AGE_SECONDS/);
    }
  });
});
