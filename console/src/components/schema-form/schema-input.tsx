/**
 * A tool's input, written with the form generated from its schema or as JSON. The form is the
 * default; JSON is the only way for a schema the form cannot render (its root is not an object of
 * named properties: oneOf, anyOf, $ref …). Switching keeps what was written: the form's values
 * become JSON, and JSON goes back to the form when the form can hold all of it.
 */
import { useId, useState } from 'react';
import { Field } from '../ui';
import { type ErrorFor, SchemaFields } from './fields';
import { formRenders, type JsonSchema } from './schema';
import { type Converted, type FormObject, formValuesOf, initialValues, toInput } from './values';

export type InputMode = 'form' | 'json';

export interface SchemaInputState {
  schema: JsonSchema;
  mode: InputMode;
  values: FormObject;
  json: string;
  /** Why the JSON could not go back to the form (shown beside the switch). */
  note: string | undefined;
  setValues: (values: FormObject) => void;
  setJson: (json: string) => void;
  switchTo: (mode: InputMode) => void;
  /** The input to send, or the problems to show first. */
  convert: () => Converted;
}

function parse(json: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(json) as unknown };
  } catch {
    return { ok: false };
  }
}

export function useSchemaInput(schema: JsonSchema): SchemaInputState {
  const renders = formRenders(schema);
  const [mode, setMode] = useState<InputMode>(renders ? 'form' : 'json');
  const [values, setValues] = useState<FormObject>(() => (renders ? initialValues(schema) : {}));
  const [json, setJson] = useState(() =>
    renders ? JSON.stringify(toInput(schema, initialValues(schema)).input, null, 2) : '{}',
  );
  const [note, setNote] = useState<string>();
  const switchTo = (next: InputMode) => {
    setNote(undefined);
    if (next === mode || (next === 'form' && !renders)) {
      return;
    }
    if (next === 'json') {
      setJson(JSON.stringify(toInput(schema, values).input, null, 2));
      setMode('json');
      return;
    }
    const parsed = parse(json.trim() === '' ? '{}' : json);
    const back = parsed.ok ? formValuesOf(schema, parsed.value) : undefined;
    if (back === undefined) {
      setNote(
        parsed.ok
          ? 'This JSON has parts the form cannot show: edit it here, or empty it to start the form afresh.'
          : 'This is not valid JSON yet: correct it, or empty it to start the form afresh.',
      );
      return;
    }
    setValues(back);
    setMode('form');
  };
  const convert = (): Converted => {
    if (mode === 'form') {
      return toInput(schema, values);
    }
    const parsed = parse(json.trim() === '' ? '{}' : json);
    if (!parsed.ok) {
      return { input: {}, problems: [{ field: 'input', message: 'is not valid JSON' }] };
    }
    const value = parsed.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { input: {}, problems: [{ field: 'input', message: 'must be a JSON object ({ … })' }] };
    }
    return { input: value as Record<string, unknown>, problems: [] };
  };
  return { schema, mode, values, json, note, setValues, setJson, switchTo, convert };
}

/** The mode switch (when the form can render the schema) and the form or the JSON editor. */
export function SchemaInput({
  state,
  errorFor,
  toolName,
}: {
  state: SchemaInputState;
  errorFor: ErrorFor;
  toolName: string;
}) {
  const id = useId();
  const renders = formRenders(state.schema);
  return (
    <>
      {renders ? (
        <fieldset className="mode-switch" aria-describedby={state.note === undefined ? undefined : `${id}-note`}>
          <legend>Write the input</legend>
          {(['form', 'json'] as const).map((m) => (
            <span key={m} className="check">
              <input
                id={`${id}-${m}`}
                type="radio"
                name={`${id}-mode`}
                checked={state.mode === m}
                onChange={() => state.switchTo(m)}
              />
              <label htmlFor={`${id}-${m}`}>{m === 'form' ? 'With the form' : 'As JSON'}</label>
            </span>
          ))}
          {state.note === undefined ? null : (
            <p id={`${id}-note`} className="notice" role="status">
              {state.note}
            </p>
          )}
        </fieldset>
      ) : (
        <p className="hint">The input of {toolName} cannot be shown as a form: write it as JSON.</p>
      )}
      {state.mode === 'form' ? (
        <SchemaFields schema={state.schema} values={state.values} onChange={state.setValues} errorFor={errorFor} />
      ) : (
        <>
          <Field
            label="Input (JSON)"
            hint="A JSON object with the tool's input; the schema below says what it takes."
            error={errorFor('input')}
          >
            {(p) => (
              <textarea
                {...p}
                className="json-input"
                spellCheck={false}
                value={state.json}
                onChange={(e) => state.setJson(e.target.value)}
              />
            )}
          </Field>
          <details>
            <summary>Input schema of {toolName}</summary>
            <pre tabIndex={0} aria-label={`Input schema of ${toolName}`}>
              {JSON.stringify(state.schema, null, 2)}
            </pre>
          </details>
        </>
      )}
    </>
  );
}
