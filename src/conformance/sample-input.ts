import type { ManifestProperty, ManifestTool } from '../sites/manifest.js';

const SAMPLE_STRING = 'agentsite-check';
const MAX_DEPTH = 6;

/**
 * The least input a tool declares valid: its required properties only, each with the simplest value
 * of its type that meets the keywords the service honours (enum, minimum/maximum, length, items).
 * No generator library: the service itself validates only this subset of JSON Schema.
 */
export function sampleInput(tool: ManifestTool): Record<string, unknown> {
  return sampleObject(tool.input_schema.properties, tool.input_schema.required ?? [], 0);
}

function sampleObject(
  properties: Record<string, ManifestProperty> | undefined,
  required: string[],
  depth: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of required) {
    const schema = properties?.[name];
    out[name] = schema === undefined ? SAMPLE_STRING : sampleValue(schema, depth + 1);
  }
  return out;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

export function sampleValue(schema: ManifestProperty, depth = 0): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[0];
  }
  const type = Array.isArray(schema.type) ? (schema.type[0] as string) : schema.type;
  switch (type) {
    case 'string': {
      const min = numberOr(schema.minLength, 0);
      const max = numberOr(schema.maxLength, Infinity);
      const text = SAMPLE_STRING.padEnd(min, 'x');
      return text.slice(0, Math.max(min, Math.min(max, text.length)));
    }
    case 'integer':
    case 'number': {
      const min = numberOr(schema.minimum, 1);
      const max = numberOr(schema.maximum, Infinity);
      const value = Math.min(Math.max(1, min), max);
      return type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const count = numberOr(schema.minItems, 0);
      const items = (schema.items ?? { type: 'string' }) as ManifestProperty;
      return depth > MAX_DEPTH ? [] : Array.from({ length: count }, () => sampleValue(items, depth + 1));
    }
    case 'object':
      return depth > MAX_DEPTH
        ? {}
        : sampleObject(
            schema.properties as Record<string, ManifestProperty> | undefined,
            Array.isArray(schema.required) ? (schema.required as string[]) : [],
            depth,
          );
    default:
      return SAMPLE_STRING;
  }
}
