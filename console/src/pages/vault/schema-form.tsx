/**
 * A form generated from a tool's input_schema (JSON Schema, as the manifest gives it). Why not
 * @rjsf/core: its validator (@rjsf/validator-ajv8) compiles schemas with `new Function`, which the
 * console's Content-Security-Policy (script-src 'self', no 'unsafe-eval') forbids, and the service
 * checks every input against the same schema anyway (VALIDATION_ERROR naming each field, shown here
 * next to that field). Manifests describe flat or nested objects of simple values; anything else is
 * edited as JSON.
 */
import { useId } from 'react';
import { Field } from '../../components/ui';

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  title?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
  [keyword: string]: unknown;
}

/** The form's values as typed: strings for inputs, booleans for checkboxes, nested for objects. */
export type FormValues = { [name: string]: string | boolean | FormValues };

function kindOf(schema: JsonSchema): 'enum' | 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'json' {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) {
    return 'enum';
  }
  if (type === 'object' && schema.properties !== undefined) {
    return 'object';
  }
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') {
    return type;
  }
  return 'json';
}

/** The starting values: the schema's defaults, else empty. */
export function initialValues(schema: JsonSchema): FormValues {
  const values: FormValues = {};
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const kind = kindOf(prop);
    if (kind === 'object') {
      values[name] = initialValues(prop);
    } else if (kind === 'boolean') {
      values[name] = prop.default === true;
    } else if (prop.default !== undefined) {
      values[name] = kind === 'json' ? JSON.stringify(prop.default, null, 2) : String(prop.default);
    } else {
      values[name] = '';
    }
  }
  return values;
}

export interface Converted {
  input: Record<string, unknown>;
  /** Fields the console could not read (bad JSON, not a number), by their path under `input`. */
  problems: Array<{ field: string; message: string }>;
}

/**
 * The input to send: empty fields left out (the service says which required ones are missing),
 * numbers as numbers, JSON parsed. Values are not checked further here: the service does.
 */
export function toInput(schema: JsonSchema, values: FormValues, path = 'input'): Converted {
  const input: Record<string, unknown> = {};
  const problems: Converted['problems'] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const value = values[name];
    const field = `${path}.${name}`;
    const kind = kindOf(prop);
    if (kind === 'object' && typeof value === 'object') {
      const nested = toInput(prop, value, field);
      problems.push(...nested.problems);
      if (Object.keys(nested.input).length > 0 || (schema.required ?? []).includes(name)) {
        input[name] = nested.input;
      }
      continue;
    }
    if (typeof value === 'boolean') {
      input[name] = value;
      continue;
    }
    if (typeof value !== 'string' || value.trim() === '') {
      continue;
    }
    if (kind === 'number' || kind === 'integer') {
      const n = Number(value);
      if (Number.isNaN(n)) {
        problems.push({ field, message: 'must be a number' });
      } else {
        input[name] = n;
      }
    } else if (kind === 'json') {
      try {
        input[name] = JSON.parse(value) as unknown;
      } catch {
        problems.push({ field, message: 'is not valid JSON' });
      }
    } else {
      input[name] = value;
    }
  }
  return { input, problems };
}

interface SchemaFieldsProps {
  schema: JsonSchema;
  values: FormValues;
  onChange: (values: FormValues) => void;
  /** The message for a field path (`input.query`), from the service's details or the console's own check. */
  errorFor: (field: string) => string | undefined;
  path?: string;
}

/** The inputs for each property of an object schema, each labelled, described and with its own error. */
export function SchemaFields({ schema, values, onChange, errorFor, path = 'input' }: SchemaFieldsProps) {
  // Required fields first: the stored manifest (jsonb) does not keep the site's order of properties.
  const required = schema.required ?? [];
  const properties = Object.entries(schema.properties ?? {}).sort(
    ([a], [b]) => Number(required.includes(b)) - Number(required.includes(a)),
  );
  if (properties.length === 0) {
    return <p className="hint">This tool takes no input.</p>;
  }
  return (
    <>
      {properties.map(([name, prop]) => (
        <SchemaField
          key={name}
          name={name}
          schema={prop}
          required={(schema.required ?? []).includes(name)}
          value={values[name]}
          onChange={(value) => onChange({ ...values, [name]: value })}
          errorFor={errorFor}
          path={`${path}.${name}`}
        />
      ))}
    </>
  );
}

interface SchemaFieldProps {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: string | boolean | FormValues | undefined;
  onChange: (value: string | boolean | FormValues) => void;
  errorFor: (field: string) => string | undefined;
  path: string;
}

function SchemaField({ name, schema, required, value, onChange, errorFor, path }: SchemaFieldProps) {
  const kind = kindOf(schema);
  const legendId = useId();
  const label = `${schema.title ?? name}${required ? ' (required)' : ''}`;
  const hint = schema.description;
  const error = errorFor(path);
  if (kind === 'object') {
    return (
      <fieldset aria-labelledby={legendId}>
        <legend id={legendId}>{label}</legend>
        {hint === undefined ? null : <p className="hint">{hint}</p>}
        <SchemaFields
          schema={schema}
          values={typeof value === 'object' ? value : {}}
          onChange={onChange}
          errorFor={errorFor}
          path={path}
        />
      </fieldset>
    );
  }
  if (kind === 'boolean') {
    const id = `${legendId}-check`;
    return (
      <div className="check">
        <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        <label htmlFor={id}>{label}</label>
        {hint === undefined ? null : <small className="hint">{hint}</small>}
        {error === undefined ? null : <small className="field-error">{error}</small>}
      </div>
    );
  }
  const text = typeof value === 'string' ? value : '';
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) =>
        kind === 'enum' ? (
          <select {...p} aria-required={required} value={text} onChange={(e) => onChange(e.target.value)}>
            <option value="">{required ? 'Choose…' : '(none)'}</option>
            {(schema.enum as string[]).map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        ) : kind === 'json' ? (
          <textarea
            {...p}
            aria-required={required}
            spellCheck={false}
            placeholder="JSON"
            value={text}
            onChange={(e) => onChange(e.target.value)}
          />
        ) : (
          <input
            {...p}
            aria-required={required}
            type={kind === 'string' ? 'text' : 'number'}
            step={kind === 'integer' ? 1 : kind === 'number' ? 'any' : undefined}
            value={text}
            onChange={(e) => onChange(e.target.value)}
          />
        )
      }
    </Field>
  );
}
