/**
 * A list in a schema form: its items (each the control of the item schema, with its own Remove
 * button) and an Add button. The group is named by the list's label; buttons name the list and the
 * item, so a screen reader user knows which one they remove.
 */
import { type ReactNode, useId } from 'react';

export function ArrayField({
  label,
  hint,
  error,
  count,
  onAdd,
  renderItem,
  extra,
}: {
  label: string;
  hint: string | undefined;
  error: string | undefined;
  count: number;
  onAdd: () => void;
  /** Item `i`'s control; `remove(onRemove)` makes its Remove button. */
  renderItem: (i: number, remove: (onRemove: () => void) => ReactNode) => ReactNode;
  extra?: ReactNode;
}) {
  const id = useId();
  const name = label.replace(/ \(required\)$/, '');
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset className="schema-list" aria-labelledby={`${id}-legend`} aria-describedby={described}>
      <legend id={`${id}-legend`}>{label}</legend>
      {hint === undefined ? null : (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {error === undefined ? null : (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
      {count === 0 ? <p className="hint">No items.</p> : null}
      {Array.from({ length: count }, (_, i) =>
        renderItem(i, (onRemove) => (
          <div className="actions item-actions">
            <button type="button" className="secondary" onClick={onRemove}>
              Remove
              <span className="visually-hidden">
                {' '}
                item {i + 1} of {name}
              </span>
            </button>
          </div>
        )),
      )}
      <div className="actions">
        <button type="button" className="secondary" onClick={onAdd}>
          Add item<span className="visually-hidden"> to {name}</span>
        </button>
      </div>
      {extra}
    </fieldset>
  );
}
