/**
 * The form's values and the input they make. Values are kept as the controls hold them (text for
 * inputs and selects, booleans for checkboxes, lists for arrays, nested objects for objects) and
 * turned into the tool's input only when it is sent: empty optional fields left out, numbers as
 * numbers, JSON parsed. Bounds and whole numbers are checked here so the form can say so beside the
 * field; everything else is checked by the service against the same schema.
 */
import { effective, itemsOf, type JsonSchema, kindOf, stringInput } from './schema';

export type FormValue = string | boolean | FormValue[] | FormObject;
export interface FormObject {
  [name: string]: FormValue;
}

export interface Problem {
  /** The field's path under `input`, as the service names it: `input.address.city`, `input.tags[0]`. */
  field: string;
  message: string;
}

export interface Converted {
  input: Record<string, unknown>;
  problems: Problem[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An ISO date-time as a datetime-local control's value (the user's time), when it is one. */
function localOf(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) {
    return iso;
  }
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/**
 * The control's value for `data` (an input, or undefined: empty, or the schema's default when
 * `withDefaults`). Data of another shape than the schema says is shown as best it can be; the round
 * trip (`fitsForm`) tells whether nothing was lost.
 */
export function valueFrom(raw: JsonSchema, data: unknown, withDefaults: boolean): FormValue {
  const schema = effective(raw);
  const given = data === undefined && withDefaults ? schema.default : data;
  switch (kindOf(schema)) {
    case 'object': {
      const source = isObject(given) ? given : {};
      const values: FormObject = {};
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        values[name] = valueFrom(prop, source[name], withDefaults);
      }
      return values;
    }
    case 'array':
      return Array.isArray(given) ? given.map((item) => valueFrom(itemsOf(schema), item, withDefaults)) : [];
    case 'boolean':
      return given === true;
    case 'enum':
      return given === undefined ? '' : JSON.stringify(given);
    case 'json':
      return given === undefined ? '' : JSON.stringify(given, null, 2);
    case 'string':
      if (typeof given === 'string' && stringInput(schema).type === 'datetime-local') {
        return localOf(given);
      }
      return given === undefined || given === null ? '' : String(given);
    default:
      return given === undefined || given === null ? '' : String(given);
  }
}

/** The starting values: the schema's defaults, else empty. */
export function initialValues(schema: JsonSchema): FormObject {
  const values = valueFrom(schema, undefined, true);
  return isObject(values) ? (values as FormObject) : {};
}

function numberProblem(schema: JsonSchema, n: number): string | undefined {
  if (kindOf(schema) === 'integer' && !Number.isInteger(n)) {
    return 'must be a whole number';
  }
  if (schema.minimum !== undefined && n < schema.minimum) {
    return `must be at least ${schema.minimum}`;
  }
  if (schema.exclusiveMinimum !== undefined && n <= schema.exclusiveMinimum) {
    return `must be more than ${schema.exclusiveMinimum}`;
  }
  if (schema.maximum !== undefined && n > schema.maximum) {
    return `must be at most ${schema.maximum}`;
  }
  if (schema.exclusiveMaximum !== undefined && n >= schema.exclusiveMaximum) {
    return `must be less than ${schema.exclusiveMaximum}`;
  }
  return undefined;
}

/**
 * One value as input; undefined: left out. `present`: the value must be there even when empty (a
 * required object, an item of a list), so an empty text stays "" and an empty number is a problem.
 */
function convert(
  raw: JsonSchema,
  value: FormValue | undefined,
  field: string,
  present: boolean,
  problems: Problem[],
): unknown {
  const schema = effective(raw);
  const kind = kindOf(schema);
  if (kind === 'object') {
    const source = isObject(value) ? (value as FormObject) : {};
    const out: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      // A required object or checkbox is always sent; a required text or number left empty is not
      // (the service then says it is missing, beside the field).
      const always = (schema.required ?? []).includes(name) && ['object', 'boolean'].includes(kindOf(prop));
      const converted = convert(prop, source[name], `${field}.${name}`, always, problems);
      if (converted !== undefined) {
        out[name] = converted;
      }
    }
    return Object.keys(out).length > 0 || present ? out : undefined;
  }
  if (kind === 'array') {
    const items = Array.isArray(value) ? value : [];
    const out = items.map((item, i) => convert(itemsOf(schema), item, `${field}[${i}]`, true, problems));
    return out.length > 0 || present ? out : undefined;
  }
  if (kind === 'boolean') {
    // An optional box left as its default says nothing: unticked without a default is left out.
    return present || value === true || schema.default === true ? value === true : undefined;
  }
  const text = typeof value === 'string' ? value : '';
  if (text.trim() === '') {
    if (!present) {
      return undefined;
    }
    if (kind === 'string') {
      return '';
    }
    problems.push({ field, message: kind === 'enum' ? 'needs a choice' : 'needs a value' });
    return undefined;
  }
  if (kind === 'number' || kind === 'integer') {
    const n = Number(text);
    const problem = Number.isNaN(n) ? 'must be a number' : numberProblem(schema, n);
    if (problem !== undefined) {
      problems.push({ field, message: problem });
      return undefined;
    }
    return n;
  }
  if (kind === 'enum' || kind === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      problems.push({ field, message: 'is not valid JSON' });
      return undefined;
    }
  }
  if (stringInput(schema).type === 'datetime-local') {
    const date = new Date(text);
    return Number.isNaN(date.getTime()) ? text : date.toISOString();
  }
  return text;
}

/** The input to send, and what the form could not read (by the field's path under `input`). */
export function toInput(schema: JsonSchema, values: FormObject): Converted {
  const problems: Problem[] = [];
  const input = convert(schema, values, 'input', true, problems);
  return { input: isObject(input) ? input : {}, problems };
}

function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

/** The form's values for an input written as JSON, or undefined when the form would lose part of it. */
export function formValuesOf(schema: JsonSchema, input: unknown): FormObject | undefined {
  if (!isObject(input)) {
    return undefined;
  }
  const values = valueFrom(schema, input, false) as FormObject;
  const back = toInput(schema, values);
  return back.problems.length === 0 && sameJson(back.input, input) ? values : undefined;
}
