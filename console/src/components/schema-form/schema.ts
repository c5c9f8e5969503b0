/**
 * How the console reads a tool's input schema (JSON Schema, as a manifest or an MCP server gives
 * it): which control each part gets, and what it says about the value (format, bounds) in words.
 * What the form cannot render (oneOf, anyOf, allOf, $ref, tuples, free-form objects) is edited as
 * JSON: that part alone, or the whole input in the form's JSON mode.
 */

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  title?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  [keyword: string]: unknown;
}

export type Kind = 'enum' | 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'json';

/** Keywords that combine or point at other schemas: the form does not guess which branch is meant. */
const COMPOSED = ['oneOf', 'allOf', '$ref', 'not', 'if', 'patternProperties'];

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The schema the form renders: itself, or for `anyOf: [X, {type: 'null'}]` (how many generators say
 * "optional X") the one branch that is not null, with the outer title, description and default.
 */
export function effective(schema: JsonSchema): JsonSchema {
  const branches = schema.anyOf;
  if (!Array.isArray(branches)) {
    return schema;
  }
  const real = branches.filter((b) => !(isSchema(b) && b.type === 'null'));
  if (real.length !== 1 || !isSchema(real[0])) {
    return schema;
  }
  const { anyOf: _anyOf, ...outer } = schema;
  return { ...real[0], ...outer };
}

function typeOf(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== 'null');
    return types.length === 1 ? types[0] : undefined;
  }
  return schema.type;
}

/** The control a schema gets. */
export function kindOf(raw: JsonSchema): Kind {
  const schema = effective(raw);
  if (schema.anyOf !== undefined || COMPOSED.some((k) => schema[k] !== undefined)) {
    return 'json';
  }
  if (
    Array.isArray(schema.enum) &&
    schema.enum.length > 0 &&
    schema.enum.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
  ) {
    return 'enum';
  }
  const type = typeOf(schema) ?? (schema.properties !== undefined ? 'object' : undefined);
  if (type === 'object') {
    return isSchema(schema.properties) && !isSchema(schema.additionalProperties) ? 'object' : 'json';
  }
  if (type === 'array') {
    return isSchema(schema.items) ? 'array' : 'json';
  }
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') {
    return type;
  }
  return 'json';
}

/** The array's item schema (kindOf said 'array'). */
export function itemsOf(schema: JsonSchema): JsonSchema {
  const items = effective(schema).items;
  return isSchema(items) ? items : {};
}

/** Whether the whole input can be edited as a form (else only as JSON). */
export function formRenders(schema: JsonSchema): boolean {
  return kindOf(schema) === 'object';
}

/** The HTML input type for a string format, and its format in words. */
export function stringInput(schema: JsonSchema): { type: string; words?: string } {
  switch (effective(schema).format) {
    case 'email':
      return { type: 'email', words: 'An email address.' };
    case 'uri':
    case 'url':
    case 'iri':
      return { type: 'url', words: 'A web address (https://…).' };
    case 'date':
      return { type: 'date', words: 'A date.' };
    case 'date-time':
      return { type: 'datetime-local', words: 'A date and time (your local time).' };
    case 'time':
      return { type: 'text', words: 'A time, as 14:30:00Z.' };
    case 'uuid':
      return { type: 'text', words: 'An identifier like 123e4567-e89b-12d3-a456-426614174000.' };
    default:
      return { type: 'text' };
  }
}

/** A number's bounds in words ("From 1 to 100."), or undefined. */
export function boundsInWords(raw: JsonSchema): string | undefined {
  const s = effective(raw);
  const low = s.minimum ?? s.exclusiveMinimum;
  const high = s.maximum ?? s.exclusiveMaximum;
  const lowWords = low === undefined ? undefined : s.minimum === undefined ? `more than ${low}` : `at least ${low}`;
  const highWords = high === undefined ? undefined : s.maximum === undefined ? `less than ${high}` : `at most ${high}`;
  const whole = typeOf(s) === 'integer' ? 'A whole number' : 'A number';
  if (lowWords === undefined && highWords === undefined) {
    return typeOf(s) === 'integer' ? 'A whole number.' : undefined;
  }
  return `${whole} ${[lowWords, highWords].filter(Boolean).join(' and ')}.`;
}

/** What the schema says of a string's or a list's length, in words. */
export function lengthInWords(raw: JsonSchema): string | undefined {
  const s = effective(raw);
  const [min, max, noun] =
    kindOf(s) === 'array' ? [s.minItems, s.maxItems, 'item'] : [s.minLength, s.maxLength, 'character'];
  const unit = (n: number) => (n === 1 ? noun : `${noun}s`);
  if (min !== undefined && max !== undefined) {
    return `From ${min} to ${max} ${unit(max)}.`;
  }
  if (min !== undefined && min > 0) {
    return `At least ${min} ${unit(min)}.`;
  }
  return max === undefined ? undefined : `At most ${max} ${unit(max)}.`;
}

/** The hint under a control: the schema's description, then what it says of the value in words. */
export function hintOf(raw: JsonSchema): string | undefined {
  const s = effective(raw);
  const kind = kindOf(s);
  const parts = [
    s.description,
    kind === 'string' ? stringInput(s).words : undefined,
    kind === 'number' || kind === 'integer' ? boundsInWords(s) : undefined,
    kind === 'string' || kind === 'array' ? lengthInWords(s) : undefined,
    kind === 'json' ? 'Written as JSON.' : undefined,
  ].filter((p): p is string => p !== undefined && p.trim() !== '');
  return parts.length === 0 ? undefined : parts.join(' ');
}
