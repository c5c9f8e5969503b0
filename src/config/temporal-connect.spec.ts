import { describe, expect, it } from '@jest/globals';
import { EnvReader } from './env-reader.js';
import { DEFAULT_TEMPORAL_CONNECT_TIMEOUT_SECONDS, readTemporalConnectSettings } from './temporal-connect.js';

describe('TEMPORAL_CONNECT_TIMEOUT_SECONDS', () => {
  function read(value: string | undefined): { seconds: number; problems: string[] } {
    const problems: string[] = [];
    const settings = readTemporalConnectSettings(new EnvReader({ TEMPORAL_CONNECT_TIMEOUT_SECONDS: value }, problems));
    return { seconds: settings.temporalConnectTimeoutSeconds, problems };
  }

  it('defaults to the SDK default of 10 seconds', () => {
    expect(DEFAULT_TEMPORAL_CONNECT_TIMEOUT_SECONDS).toBe(10);
    expect(read(undefined)).toEqual({ seconds: 10, problems: [] });
  });

  it('takes a whole number of seconds from 1 to 300 and names the variable otherwise', () => {
    expect(read('2')).toEqual({ seconds: 2, problems: [] });
    expect(read('0').problems).toEqual([
      'TEMPORAL_CONNECT_TIMEOUT_SECONDS must be a whole number from 1 to 300, got "0"',
    ]);
    expect(read('1.5').problems).toHaveLength(1);
  });
});
