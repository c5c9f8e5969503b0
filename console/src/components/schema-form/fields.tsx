/**
 * The controls of a schema form, one per property, each labelled (its title, else its name, and
 * "(required)"), described (its description and what the schema says of the value, in words) and
 * with its own error (the form's check, or the service's VALIDATION_ERROR detail for that path).
 */
import { type ReactNode, useId } from 'react';
import { Field } from '../ui';
import { ArrayField } from './array-field';
import { effective, hintOf, itemsOf, type JsonSchema, kindOf, stringInput } from './schema';
import { type FormObject, type FormValue, valueFrom } from './values';

export type ErrorFor = (field: string) => string | undefined;

interface SchemaFieldsProps {
  schema: JsonSchema;
  values: FormObject;
  onChange: (values: FormObject) => void;
  /** The message for a field path (`input.query`), from the service's details or the form's own check. */
  errorFor: ErrorFor;
  path?: string;
}

/** The controls for each property of an object schema; required ones first. */
export function SchemaFields({ schema, values, onChange, errorFor, path = 'input' }: SchemaFieldsProps) {
  // Required fields first: a stored manifest (jsonb) does not keep the server's order of properties.
  const required = effective(schema).required ?? [];
  const properties = Object.entries(effective(schema).properties ?? {}).sort(
    ([a], [b]) => Number(required.includes(b)) - Number(required.includes(a)),
  );
  if (properties.length === 0) {
    return <p className="hint">{path === 'input' ? 'This tool takes no input.' : 'Nothing to fill in.'}</p>;
  }
  return (
    <>
      {properties.map(([name, prop]) => (
        <SchemaField
          key={name}
          label={`${prop.title ?? name}${required.includes(name) ? ' (required)' : ''}`}
          schema={prop}
          required={required.includes(name)}
          value={values[name]}
          onChange={(value) => onChange({ ...values, [name]: value })}
          errorFor={errorFor}
          path={`${path}.${name}`}
        />
      ))}
    </>
  );
}

export interface SchemaFieldProps {
  /** The control's label, as read (with "(required)" when it is). */
  label: string;
  schema: JsonSchema;
  required: boolean;
  value: FormValue | undefined;
  onChange: (value: FormValue) => void;
  errorFor: ErrorFor;
  path: string;
  /** An extra control after the field (an item's Remove button). */
  extra?: ReactNode;
}

/** One property's control, by the kind of its schema; objects and arrays hold further fields. */
export function SchemaField(props: SchemaFieldProps) {
  const { label, schema, value, onChange, errorFor, path, extra } = props;
  const kind = kindOf(schema);
  const id = useId();
  const hint = hintOf(schema);
  const error = errorFor(path);
  if (kind === 'object') {
    return (
      <fieldset aria-labelledby={`${id}-legend`} aria-describedby={hint === undefined ? undefined : `${id}-hint`}>
        <legend id={`${id}-legend`}>{label}</legend>
        {hint === undefined ? null : (
          <p id={`${id}-hint`} className="hint">
            {hint}
          </p>
        )}
        {error === undefined ? null : <p className="field-error">{error}</p>}
        <SchemaFields
          schema={schema}
          values={typeof value === 'object' && !Array.isArray(value) ? value : {}}
          onChange={onChange}
          errorFor={errorFor}
          path={path}
        />
        {extra}
      </fieldset>
    );
  }
  if (kind === 'array') {
    const items = Array.isArray(value) ? value : [];
    return (
      <ArrayField
        label={label}
        hint={hint}
        error={error}
        count={items.length}
        onAdd={() => onChange([...items, valueFrom(itemsOf(schema), undefined, true)])}
        extra={extra}
        renderItem={(i, remove) => (
          <SchemaField
            key={i}
            label={`${label.replace(/ \(required\)$/, '')}, item ${i + 1}`}
            schema={itemsOf(schema)}
            required
            value={items[i]}
            onChange={(item) => onChange(items.map((old, j) => (j === i ? item : old)))}
            errorFor={errorFor}
            path={`${path}[${i}]`}
            extra={remove(() => onChange(items.filter((_, j) => j !== i)))}
          />
        )}
      />
    );
  }
  if (kind === 'boolean') {
    return (
      <div className={error === undefined ? 'check' : 'check invalid'}>
        <input
          id={`${id}-check`}
          type="checkbox"
          checked={value === true}
          aria-describedby={[hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined}
          aria-invalid={error !== undefined || undefined}
          onChange={(e) => onChange(e.target.checked)}
        />
        <label htmlFor={`${id}-check`}>{label}</label>
        {hint === undefined ? null : (
          <small id={`${id}-hint`} className="hint">
            {hint}
          </small>
        )}
        {error === undefined ? null : (
          <small id={`${id}-error`} className="field-error">
            {error}
          </small>
        )}
        {extra}
      </div>
    );
  }
  return (
    <>
      <ScalarField {...props} kind={kind} hint={hint} error={error} />
      {extra}
    </>
  );
}

/** A text, number, choice or JSON control. */
function ScalarField({
  label,
  schema,
  required,
  value,
  onChange,
  kind,
  hint,
  error,
}: SchemaFieldProps & { kind: string; hint: string | undefined; error: string | undefined }) {
  const text = typeof value === 'string' ? value : '';
  const s = effective(schema);
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) =>
        kind === 'enum' ? (
          <select {...p} aria-required={required} value={text} onChange={(e) => onChange(e.target.value)}>
            <option value="">{required ? 'Choose…' : '(none)'}</option>
            {(s.enum ?? []).map((v) => (
              <option key={JSON.stringify(v)} value={JSON.stringify(v)}>
                {v === null ? '(null)' : String(v)}
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
        ) : kind === 'string' ? (
          <input
            {...p}
            aria-required={required}
            type={stringInput(s).type}
            maxLength={s.maxLength}
            value={text}
            onChange={(e) => onChange(e.target.value)}
          />
        ) : (
          <input
            {...p}
            aria-required={required}
            type="number"
            inputMode={kind === 'integer' ? 'numeric' : 'decimal'}
            step={kind === 'integer' ? 1 : 'any'}
            min={s.minimum}
            max={s.maximum}
            value={text}
            onChange={(e) => onChange(e.target.value)}
          />
        )
      }
    </Field>
  );
}
