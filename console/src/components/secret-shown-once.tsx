/**
 * A secret the service shows once (a webhook's, an agent's notification signing secret): after the
 * save or rotation that made it, the secret to copy and a button to hide it; otherwise a hint that it
 * was shown once. Then its rotation, asked twice, and what went wrong with it.
 */
import { type ReactNode } from 'react';
import { type ApiError } from '../api/client';
import { ConfirmButton, CopyField } from '../pages/agents/parts';
import { ErrorNote } from './ui';

export interface SecretRotation {
  label: string;
  question: string;
  busy: boolean;
  onConfirm: () => void;
  error: ApiError | undefined;
  errorTitle: string;
}

export function SecretShownOnce({
  secret,
  name,
  label,
  use,
  hint,
  onHide,
  rotation,
}: {
  /** The secret just made; undefined once hidden or when the page was opened later. */
  secret: string | undefined;
  /** How the notice names it: "Copy the {name} now". */
  name: string;
  /** The copy field's label. */
  label: string;
  /** What the secret is for, after the notice's first sentence. */
  use: ReactNode;
  /** Shown when no secret is on the page. */
  hint: ReactNode;
  onHide: () => void;
  rotation: SecretRotation;
}) {
  return (
    <>
      {secret === undefined ? (
        <p className="hint">{hint}</p>
      ) : (
        <div className="notice" role="status">
          <p>
            <strong>Copy the {name} now: you will not see it again.</strong> {use}
          </p>
          <CopyField label={label} value={secret} secret />
          <button type="button" className="secondary" onClick={onHide}>
            I have copied it: hide the secret
          </button>
        </div>
      )}
      <ConfirmButton
        label={rotation.label}
        question={rotation.question}
        confirmLabel="Rotate now"
        busy={rotation.busy}
        onConfirm={rotation.onConfirm}
      />
      <ErrorNote error={rotation.error} title={rotation.errorTitle} />
    </>
  );
}
