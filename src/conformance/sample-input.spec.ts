import { describe, expect, it } from '@jest/globals';
import type { ManifestTool } from '../sites/manifest.js';
import { validateToolInput } from '../sites/tool-input.js';
import { sampleInput } from './sample-input.js';

function tool(properties: ManifestTool['input_schema']['properties'], required: string[]): ManifestTool {
  return { name: 't', description: 't', input_schema: { type: 'object', properties, required } };
}

describe('sampleInput', () => {
  it('fills only the required fields, each with a value the service itself accepts', () => {
    const t = tool(
      {
        query: { type: 'string', minLength: 20 },
        limit: { type: 'integer', minimum: 5, maximum: 9 },
        kind: { type: 'string', enum: ['a', 'b'] },
        ratio: { type: 'number', maximum: 0.5 },
        flag: { type: 'boolean' },
        tags: { type: 'array', minItems: 2, items: { type: 'string' } },
        where: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        optional: { type: 'string' },
      },
      ['query', 'limit', 'kind', 'ratio', 'flag', 'tags', 'where'],
    );
    const input = sampleInput(t);
    expect(input).toEqual({
      query: 'agentsite-checkxxxxx',
      limit: 5,
      kind: 'a',
      ratio: 0.5,
      flag: true,
      tags: ['agentsite-check', 'agentsite-check'],
      where: { city: 'agentsite-check' },
    });
    expect(() => validateToolInput(t, input)).not.toThrow();
  });

  it('gives an empty object to a tool without required fields', () => {
    expect(sampleInput(tool({ q: { type: 'string' } }, []))).toEqual({});
  });
});
