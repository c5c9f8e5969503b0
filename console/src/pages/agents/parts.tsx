/** Small pieces the agents pages share: copying a value, confirming a destructive action, labels. */
import { type ReactNode, useId, useRef, useState } from 'react';
import { type Schemas } from '../../api/client';
import { formatInZone, previewCron } from './cron';

export type Agent = Schemas['AgentResponseDto'];
export type AgentDetail = Schemas['AgentDetailDto'];
export type Run = Schemas['RunResponseDto'];
export type Trigger = Agent['trigger'];

/** A value to copy (webhook URL, secret): a read-only field, selectable by hand, and a Copy button. */
export function CopyField({ label, value, secret = false }: { label: string; value: string; secret?: boolean }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(`${label} copied`);
    } catch {
      // No clipboard (a page served over plain http): select it so the user can copy it by hand.
      input.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy');
    }
  };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input
          id={id}
          ref={input}
          readOnly
          value={value}
          className={secret ? 'secret' : undefined}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button
          type="button"
          className="secondary"
          onClick={() => void copy()}
          aria-label={`Copy ${label.toLowerCase()}`}
        >
          Copy
        </button>
      </div>
      <small role="status" className="hint">
        {copied}
      </small>
    </div>
  );
}

/**
 * A destructive action asked twice, in the page (no browser dialog): the first button shows what
 * will happen and the two answers; focus moves to the confirmation.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  busy,
  danger = true,
}: {
  label: string;
  question: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  busy: boolean;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={danger ? 'danger' : 'secondary'} onClick={() => setAsking(true)} disabled={busy}>
        {label}
      </button>
    );
  }
  return (
    <div className="confirm" role="group" aria-label={label}>
      <p>{question}</p>
      <div className="actions">
        <button
          type="button"
          className={danger ? 'danger' : undefined}
          autoFocus
          disabled={busy}
          onClick={() => {
            setAsking(false);
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
        <button type="button" className="secondary" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

export function triggerLabel(trigger: Trigger): string {
  switch (trigger.type) {
    case 'manual':
      return 'Manual';
    case 'scheduled':
      return `Schedule: ${trigger.cron} (${trigger.timezone})`;
    case 'webhook':
      return 'Webhook';
  }
}

/** The next firing of a scheduled agent, computed here as the service's cron library would. */
export function nextFiring(trigger: Trigger): string {
  if (trigger.type !== 'scheduled') {
    return '—';
  }
  const preview = previewCron(trigger.cron, trigger.timezone, 1);
  const first = preview.ok ? preview.firings[0] : undefined;
  return first === undefined ? '—' : formatInZone(first, trigger.timezone);
}

const STATUS_CLASS: Record<Run['status'], string> = {
  queued: 'badge warn',
  active: 'badge warn',
  completed: 'badge ok',
  failed: 'badge bad',
  cancelled: 'badge',
};

export function RunStatus({ status }: { status: Run['status'] }) {
  return <span className={STATUS_CLASS[status]}>{status}</span>;
}

export function isLive(run: Run): boolean {
  return run.status === 'queued' || run.status === 'active';
}
