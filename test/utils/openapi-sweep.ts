import fc from 'fast-check';

/**
 * Bad-input cases for every field of every route, derived from the service's own OpenAPI document:
 * each request body field (nested ones and array items too) and each query parameter gets `null`,
 * a value of every JSON type and the boundary values of its schema, one field at a time over an
 * otherwise valid body, so a field's own check is what answers.
 */

export interface Schema {
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  example?: unknown;
  $ref?: string;
  allOf?: Schema[];
}

interface Operation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface SweepCase {
  method: string;
  /** The path template, e.g. /api/admin/users/{id}. */
  route: string;
  /** The field: `body.trigger.schema[0].name` or `query.limit`. */
  field: string;
  value: unknown;
  body?: unknown;
  query?: Record<string, string>;
  /** The value breaks the field's schema: the answer must be VALIDATION_ERROR naming the field. */
  mustRefuse: boolean;
}

/** Values of every JSON type (integer and number apart). */
const TYPED_VALUES: Array<[string, unknown]> = [
  ['string', 'sweep'],
  ['number', 1.5],
  ['integer', 7],
  ['boolean', true],
  ['array', []],
  ['object', {}],
  ['null', null],
];

const LONG = 'x'.repeat(10_000);
const HUGE = 2 ** 53;
const SEED = 20261123;

export function resolve(doc: OpenApiDocument, schema: Schema | undefined): Schema {
  if (schema === undefined) {
    return {};
  }
  if (schema.$ref !== undefined) {
    const name = schema.$ref.split('/').pop()!;
    return resolve(doc, doc.components?.schemas?.[name]);
  }
  if (schema.allOf !== undefined) {
    const { allOf, ...rest } = schema;
    return Object.assign({}, ...allOf.map((part) => resolve(doc, part)), rest) as Schema;
  }
  return schema;
}

function jsonType(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'array';
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? 'integer' : 'number';
  }
  return typeof value;
}

/** Whether `value` breaks what `schema` says of it (type, null, enum, lengths, ranges, items count). */
export function breaks(schema: Schema, value: unknown): boolean {
  const type = jsonType(value);
  if (value === null) {
    return schema.nullable !== true;
  }
  if (schema.type !== undefined) {
    const fits = schema.type === type || (schema.type === 'number' && type === 'integer');
    if (!fits) {
      return true;
    }
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    return true;
  }
  if (typeof value === 'string') {
    if (value.includes('\u0000')) {
      return true; // PostgreSQL stores no NUL character: every string field must refuse it
    }
    // JSON Schema lengths count characters (code points), not UTF-16 units.
    const length = [...value].length;
    if (length > (schema.maxLength ?? Infinity) || length < (schema.minLength ?? 0)) {
      return true;
    }
    if (schema.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
      return true;
    }
  }
  if (typeof value === 'number' && (value > (schema.maximum ?? Infinity) || value < (schema.minimum ?? -Infinity))) {
    return true;
  }
  if (Array.isArray(value) && (value.length > (schema.maxItems ?? Infinity) || value.length < (schema.minItems ?? 0))) {
    return true;
  }
  return false;
}

/** Boundary values for a field of this schema (beyond one value of every JSON type). */
function boundaries(schema: Schema, valid: unknown): unknown[] {
  const values: unknown[] = [];
  switch (schema.type) {
    case 'string': {
      values.push('', ' ', LONG, 'NaN', 'Infinity', '-1', '0', 'not-a-uuid', '00000000-0000-0000-0000-00000000000g');
      values.push('\u0000', '😀'.repeat(50), "' OR 1=1 --");
      if (schema.maxLength !== undefined) {
        values.push('x'.repeat(schema.maxLength), 'x'.repeat(schema.maxLength + 1));
      }
      if (schema.minLength !== undefined && schema.minLength > 0) {
        values.push('x'.repeat(schema.minLength - 1));
      }
      if (schema.enum !== undefined) {
        values.push(String(schema.enum[0]).toUpperCase(), `${String(schema.enum[0])} `);
      }
      break;
    }
    case 'integer':
    case 'number': {
      values.push(0, -1, HUGE, -HUGE, 1e308, -1e308, 0.5, '1', '0x10');
      if (schema.minimum !== undefined) {
        values.push(schema.minimum, schema.minimum - 1);
      }
      if (schema.maximum !== undefined) {
        values.push(schema.maximum, schema.maximum + 1);
      }
      break;
    }
    case 'array': {
      values.push([null], [{}], ['sweep'], [[]], [1]);
      if (schema.maxItems !== undefined) {
        values.push(Array.from({ length: schema.maxItems + 1 }, () => (Array.isArray(valid) ? valid[0] : 'x')));
      }
      break;
    }
    case 'object':
      values.push({ nested: { deeper: { deepest: [] } } }, 'sweep', [{}]);
      break;
    case 'boolean':
      values.push('true', 0, 1, 'false');
      break;
    default:
      break;
  }
  // Two more values from fast-check (fixed seed: the same requests every run).
  values.push(...fc.sample(fc.jsonValue({ maxDepth: 2 }), { numRuns: 2, seed: SEED }));
  return values;
}

export interface ValidValues {
  /** A valid value for a field, by field name (ids of the suite's fixtures, an address that fails fast). */
  byName(route: string, name: string): unknown;
}

/** A valid value of the schema: the fixture's value for the name, else the smallest thing the schema allows. */
export function validValue(
  doc: OpenApiDocument,
  raw: Schema,
  route: string,
  name: string,
  values: ValidValues,
): unknown {
  const known = values.byName(route, name);
  if (known !== undefined) {
    return known;
  }
  const schema = resolve(doc, raw);
  if (schema.enum !== undefined) {
    return schema.enum[0];
  }
  switch (schema.type) {
    case 'string':
      if (schema.format === 'uuid') {
        return '00000000-0000-4000-8000-000000000000';
      }
      if (schema.format === 'date-time') {
        return '2030-01-01T00:00:00Z';
      }
      return typeof schema.example === 'string' ? schema.example : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array': {
      const items = resolve(doc, schema.items);
      // An array of objects keeps one item, so the item's own fields are swept too.
      return items.type === 'object' || items.properties !== undefined
        ? [validValue(doc, items, route, `${name}[]`, values)]
        : [];
    }
    default: {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        if (schema.required?.includes(key)) {
          out[key] = validValue(doc, child, route, key, values);
        }
      }
      return out;
    }
  }
}

type Step = string | number;

function setAt(target: unknown, steps: Step[], value: unknown): unknown {
  const copy = structuredClone(target) as Record<string | number, unknown>;
  let cursor = copy;
  for (const [index, step] of steps.entries()) {
    if (index === steps.length - 1) {
      cursor[step] = value;
    } else {
      cursor[step] ??= typeof steps[index + 1] === 'number' ? [] : {};
      cursor = cursor[step] as Record<string | number, unknown>;
    }
  }
  return copy;
}

function getAt(target: unknown, steps: Step[]): unknown {
  let cursor = target;
  for (const step of steps) {
    if (cursor === null || typeof cursor !== 'object') {
      return undefined;
    }
    cursor = (cursor as Record<string | number, unknown>)[step];
  }
  return cursor;
}

/** The schema of the value at `steps` (a property name, or an array index for its items). */
function schemaAt(doc: OpenApiDocument, root: Schema, steps: Step[]): Schema {
  let schema = resolve(doc, root);
  for (const step of steps) {
    schema = resolve(doc, typeof step === 'number' ? schema.items : schema.properties?.[step]);
  }
  return schema;
}

function fieldName(steps: Step[]): string {
  return steps.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** Every field of a body schema, nested ones and the first item of arrays included, with its schema. */
function fields(doc: OpenApiDocument, raw: Schema, steps: Step[] = []): Array<{ steps: Step[]; schema: Schema }> {
  const schema = resolve(doc, raw);
  const out: Array<{ steps: Step[]; schema: Schema }> = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const resolved = resolve(doc, child);
    const here = [...steps, key];
    out.push({ steps: here, schema: resolved });
    if (resolved.properties !== undefined) {
      out.push(...fields(doc, resolved, here));
    }
    if (resolved.type === 'array' && resolved.items !== undefined) {
      const items = resolve(doc, resolved.items);
      out.push({ steps: [...here, 0], schema: items });
      if (items.properties !== undefined) {
        out.push(...fields(doc, items, [...here, 0]));
      }
    }
  }
  return out;
}

/** The cases of one route: its body's fields, then its query parameters. */
export function casesOf(doc: OpenApiDocument, route: string, method: string, values: ValidValues): SweepCase[] {
  const operation = doc.paths[route]?.[method.toLowerCase()];
  if (operation === undefined) {
    return [];
  }
  const cases: SweepCase[] = [];
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  if (bodySchema !== undefined) {
    const base = validValue(doc, bodySchema, route, '', values);
    for (const { steps, schema } of fields(doc, bodySchema)) {
      const name = String(steps.filter((s) => typeof s === 'string').pop());
      const valid = validValue(doc, schema, route, name, values);
      // A nested field needs valid parents (an optional object, an array's item) around it.
      let withParents = base;
      for (let depth = 1; depth < steps.length; depth += 1) {
        const prefix = steps.slice(0, depth);
        if (getAt(withParents, prefix) === undefined) {
          const parentName = String(prefix.filter((s) => typeof s === 'string').pop());
          const parent = validValue(doc, schemaAt(doc, bodySchema, prefix), route, parentName, values);
          withParents = setAt(withParents, prefix, parent);
        }
      }
      const candidates = [...TYPED_VALUES.map(([, v]) => v), ...boundaries(schema, valid)];
      for (const value of candidates) {
        cases.push({
          method,
          route,
          field: `body.${fieldName(steps)}`,
          value,
          body: setAt(withParents, steps, value),
          mustRefuse: breaks(schema, value),
        });
      }
    }
  }
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'query') {
      continue;
    }
    const schema = resolve(doc, parameter.schema);
    const numeric = schema.type === 'number' || schema.type === 'integer';
    for (const value of ['', '0', '-1', '1.5', 'NaN', 'Infinity', '1e309', 'null', 'abc', '%00', LONG, '200', '201']) {
      const asNumber = Number(value);
      const refused =
        numeric &&
        (value.trim() === '' ||
          !Number.isInteger(asNumber) ||
          asNumber < (schema.minimum ?? -Infinity) ||
          asNumber > (schema.maximum ?? Infinity));
      cases.push({
        method,
        route,
        field: `query.${parameter.name}`,
        value,
        query: { [parameter.name]: value },
        mustRefuse: refused,
      });
    }
  }
  return cases;
}

/** A route's path parameters, from the document (`{name}` in the template and `in: path` entries). */
export function pathParameters(doc: OpenApiDocument, route: string, method: string): string[] {
  const declared = (doc.paths[route]?.[method.toLowerCase()]?.parameters ?? [])
    .filter((p) => p.in === 'path')
    .map((p) => p.name);
  const inTemplate = [...route.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  return [...new Set([...inTemplate, ...declared])];
}

export interface BadSegment {
  label: string;
  /** The segment as it goes on the wire (already percent-encoded where it needs to be). */
  raw: string;
  /** A well-formed id that names nothing: the route's not-found code, never VALIDATION_ERROR. */
  wellFormed?: boolean;
  /** Not valid percent-encoding of UTF-8: no route can read it, VALIDATION_ERROR naming the path. */
  undecodable?: boolean;
}

/**
 * Bad values for a path parameter: ids of the wrong shape, encodings that decode to something
 * surprising, and well-formed ids that name nothing.
 */
export const BAD_SEGMENTS: BadSegment[] = [
  { label: 'not a UUID', raw: 'not-a-uuid' },
  { label: 'a UUID with a non-hex digit', raw: '00000000-0000-4000-8000-00000000000g' },
  { label: 'a UUID in braces', raw: '%7B00000000-0000-4000-8000-000000000000%7D' },
  { label: 'a UUID with a trailing space', raw: '00000000-0000-4000-8000-000000000000%20' },
  { label: '10,000 characters', raw: LONG },
  { label: 'a percent-encoded NUL', raw: '%00' },
  { label: 'NUL inside a UUID', raw: '00000000-0000-4000-8000-%0000000000000' },
  { label: 'a percent-encoded slash', raw: '%2F' },
  { label: 'an encoded parent directory', raw: '%2E%2E' },
  { label: 'a literal parent directory', raw: '..' },
  { label: 'unicode', raw: encodeURIComponent('😀ünïcödé') },
  { label: 'a fullwidth UUID', raw: encodeURIComponent('０００００００００-0000-4000-8000-000000000000') },
  { label: 'an encoded space', raw: '%20' },
  { label: 'an encoded tab', raw: '%09' },
  { label: 'a broken percent-encoding', raw: '%E0%A4%A', undecodable: true },
  { label: 'a lone percent sign', raw: '%', undecodable: true },
  { label: 'invalid UTF-8', raw: '%FF%FE', undecodable: true },
  { label: 'SQL', raw: encodeURIComponent("' OR 1=1 --") },
  { label: 'zero', raw: '0' },
  { label: 'a negative number', raw: '-1' },
  { label: 'a 40-digit number', raw: '9'.repeat(40) },
  { label: 'a float', raw: '1.5' },
  { label: 'an overflowing exponent', raw: '1e309' },
  { label: 'an unknown UUID', raw: '5b0e9c1e-3a52-4d0b-9f3e-2f8b6c1d7a40', wellFormed: true },
  { label: 'an unknown UUID in upper case', raw: '5B0E9C1E-3A52-4D0B-9F3E-2F8B6C1D7A40', wellFormed: true },
  { label: 'the nil UUID', raw: '00000000-0000-0000-0000-000000000000', wellFormed: true },
];
