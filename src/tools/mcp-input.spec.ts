import { describe, expect, it } from '@jest/globals';
import { refusal } from '../common/testing/refusals.js';
import type { ManifestTool } from '../sites/manifest.js';
import { cachedMcpValidators, validateMcpInput, withoutPatterns } from './mcp-input.js';

/** Nested quantifiers: a backtracking engine takes exponential time on "aaa…a!" (ReDoS). */
const CATASTROPHIC = '^(a+)+$';
const EVIL_INPUT = `${'a'.repeat(24)}!`;

function tool(input_schema: Record<string, unknown>): ManifestTool {
  return { name: 'lookup', description: '', input_schema } as unknown as ManifestTool;
}

describe('validateMcpInput: no regular expression of the server runs', () => {
  it('returns at once on a catastrophic pattern that would take seconds', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', pattern: CATASTROPHIC } },
      required: ['name'],
    };
    const started = performance.now();
    validateMcpInput(tool(schema), { name: EVIL_INPUT });
    // ^(a+)+$ on 24 a's and a "!" backtracks 2^24 times: seconds of CPU (about 3.5 s on this machine).
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('drops pattern, patternProperties and format "regex" wherever a schema stands', () => {
    const schema = {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string', pattern: CATASTROPHIC } },
        rule: { type: 'string', format: 'regex' },
        when: { type: 'string', format: 'date' },
      },
      patternProperties: { [CATASTROPHIC]: { type: 'string' } },
      propertyNames: { pattern: CATASTROPHIC },
      allOf: [{ properties: { name: { pattern: CATASTROPHIC } } }],
      if: { not: { pattern: CATASTROPHIC } },
    };
    expect(withoutPatterns(schema)).toEqual({
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string' } },
        rule: { type: 'string' },
        when: { type: 'string', format: 'date' },
      },
      propertyNames: {},
      allOf: [{ properties: { name: {} } }],
      if: { not: {} },
    });
  });

  it('still checks the rest of the schema: types, required, and a property named "pattern"', async () => {
    const schema = {
      type: 'object',
      properties: { pattern: { type: 'string', pattern: CATASTROPHIC }, n: { type: 'integer', minimum: 1 } },
      required: ['pattern'],
    };
    const missing = await refusal(Promise.resolve().then(() => validateMcpInput(tool(schema), { n: 2 })));
    expect([missing.code, JSON.stringify(missing.details)]).toEqual([
      'VALIDATION_ERROR',
      expect.stringContaining('pattern'),
    ]);
    const wrong = await refusal(Promise.resolve().then(() => validateMcpInput(tool(schema), { pattern: 'x', n: 0 })));
    expect(wrong.details?.map((d) => d.field)).toEqual(['input.n']);
    expect(() => validateMcpInput(tool(schema), { pattern: EVIL_INPUT, n: 1 })).not.toThrow();
  });

  it('keeps the properties patternProperties admitted when additionalProperties is false', () => {
    const schema = { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false };
    expect(() => validateMcpInput(tool(schema), { 'x-trace': 'on' })).not.toThrow();
    expect(withoutPatterns(schema)).toEqual({ type: 'object' });
  });

  it('leaves data alone: enum, const and default values, and property names', () => {
    const schema = {
      properties: { pattern: { enum: [{ pattern: 'kept' }], default: { pattern: 'kept' } } },
      $defs: { pattern: { type: 'string', pattern: 'gone' } },
    };
    expect(withoutPatterns(schema)).toEqual({
      properties: { pattern: { enum: [{ pattern: 'kept' }], default: { pattern: 'kept' } } },
      $defs: { pattern: { type: 'string' } },
    });
  });

  it('keeps at most 500 compiled checks', () => {
    for (let i = 0; i < 520; i += 1) {
      validateMcpInput(tool({ type: 'object', properties: { [`p${i}`]: { type: 'string' } } }), {});
    }
    expect(cachedMcpValidators()).toBe(500);
  });
});
