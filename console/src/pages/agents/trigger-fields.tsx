/** The trigger part of the agent form: manual, a cron schedule with its time zone, or a webhook. */
import { useEffect, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { type ApiError, type Schemas } from '../../api/client';
import { ErrorNote, Field } from '../../components/ui';
import { type Gate, GateNote } from '../billing/gates';
import { formatInZone, localTimeZone, previewCron, timeZones } from './cron';
import { type Trigger } from './parts';

export type TriggerDto = Schemas['TriggerDto'];

export interface TriggerDraft {
  type: Trigger['type'];
  cron: string;
  timezone: string;
  allowActionOverride: boolean;
  /** The webhook payload schema as the user types it: a JSON array of field definitions. */
  schemaText: string;
}

const EXAMPLE_SCHEMA = [
  { name: 'ticket', type: 'string', description: 'The ticket text', required: true },
  { name: 'priority', type: 'integer' },
];

export function draftOf(trigger: Trigger | undefined): TriggerDraft {
  return {
    type: trigger?.type ?? 'manual',
    cron: trigger?.type === 'scheduled' ? trigger.cron : '0 9 * * 1-5',
    timezone: trigger?.type === 'scheduled' ? trigger.timezone : localTimeZone(),
    allowActionOverride: trigger?.type === 'webhook' ? trigger.allowActionOverride : false,
    schemaText: JSON.stringify(trigger?.type === 'webhook' ? trigger.schema : EXAMPLE_SCHEMA, null, 2),
  };
}

/** The schema text read as JSON, or what is wrong with it (the API checks each field's contents). */
export function parseSchema(text: string): { ok: true; value: unknown[] } | { ok: false; problem: string } {
  if (text.trim() === '') {
    return { ok: true, value: [] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `Not valid JSON: ${(err as Error).message}` };
  }
  if (!Array.isArray(value)) {
    return { ok: false, problem: 'Must be a JSON array of field definitions: [{"name": …, "type": …}, …]' };
  }
  const notObject = value.findIndex((f) => typeof f !== 'object' || f === null || Array.isArray(f));
  if (notObject >= 0) {
    return { ok: false, problem: `Item ${notObject} must be an object such as {"name": "ticket", "type": "string"}` };
  }
  return { ok: true, value };
}

/** The trigger to send, or the first local problem that stops the form from being sent. */
export function triggerOf(draft: TriggerDraft): { dto: TriggerDto } | { problem: string } {
  switch (draft.type) {
    case 'manual':
      return { dto: { type: 'manual' } };
    case 'scheduled': {
      const preview = previewCron(draft.cron, draft.timezone, 1);
      return preview.ok
        ? { dto: { type: 'scheduled', cron: draft.cron.trim(), timezone: draft.timezone } }
        : { problem: `Cron expression: ${preview.problem}` };
    }
    case 'webhook': {
      const schema = parseSchema(draft.schemaText);
      return schema.ok
        ? {
            dto: {
              type: 'webhook',
              allowActionOverride: draft.allowActionOverride,
              // Shape-checked field by field by the API (VALIDATION_ERROR names the field at fault).
              schema: schema.value as NonNullable<TriggerDto['schema']>,
            },
          }
        : { problem: `Payload schema: ${schema.problem}` };
    }
  }
}

/** Every problem the API named under `prefix` (trigger.schema[0].name, …), in plain words. */
function messagesUnder(error: ApiError | undefined, prefix: string): string | undefined {
  return error?.fieldMessage(prefix);
}

/** The next five firings, recomputed as the user types (the clock moves on too, each minute). */
function CronPreviewList({ cron, timezone }: { cron: string; timezone: string }) {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), 30_000);
    return () => clearInterval(timer);
  }, []);
  const preview = useMemo(() => previewCron(cron, timezone, 5, now), [cron, timezone, now]);
  return (
    <div className="cron-preview" aria-live="polite">
      <h3 id="next-firings">Next five firings</h3>
      {preview.ok ? (
        <ol aria-labelledby="next-firings">
          {preview.firings.map((d) => (
            <li key={d.toISOString()}>
              <time dateTime={d.toISOString()}>{formatInZone(d, timezone)}</time>
            </li>
          ))}
        </ol>
      ) : (
        <p className="hint">None until the expression is valid.</p>
      )}
    </div>
  );
}

export function TriggerFields({
  draft,
  onChange,
  error,
  gates = {},
}: {
  draft: TriggerDraft;
  onChange: (draft: TriggerDraft) => void;
  /** The last save's error: field messages under trigger.*, TIER_REQUIRED shown here. */
  error: ApiError | undefined;
  /** The choices the user's plan does not include (said beside them, and not offered unless already chosen). */
  gates?: Partial<Record<Trigger['type'], Gate | null>>;
}) {
  const zones = useMemo(timeZones, []);
  const set = (patch: Partial<TriggerDraft>) => onChange({ ...draft, ...patch });
  const cronPreview = previewCron(draft.cron, draft.timezone, 1);
  const schema = parseSchema(draft.schemaText);
  const choices: Array<{ type: Trigger['type']; label: string; hint: string }> = [
    { type: 'manual', label: 'Manual', hint: 'Runs when you press Run now.' },
    { type: 'scheduled', label: 'Schedule (cron)', hint: 'Runs on a cron schedule in a time zone.' },
    { type: 'webhook', label: 'Webhook', hint: 'Runs when a signed POST reaches its URL.' },
  ];
  return (
    <fieldset>
      <legend>Trigger</legend>
      <div
        role="radiogroup"
        aria-label="Trigger type"
        className="choices"
        aria-describedby={messagesUnder(error, 'trigger.type') === undefined ? undefined : 'trigger-type-error'}
      >
        {choices.map((c) => {
          const gate = gates[c.type] ?? null;
          return (
            <div className={gate === null ? 'check' : 'check gated'} key={c.type}>
              <input
                type="radio"
                id={`trigger-${c.type}`}
                name="trigger-type"
                value={c.type}
                checked={draft.type === c.type}
                // A choice the plan lacks is not offered; one an agent already has stays, marked.
                disabled={gate !== null && draft.type !== c.type}
                onChange={() => set({ type: c.type })}
                aria-describedby={`trigger-${c.type}-hint`}
              />
              <label htmlFor={`trigger-${c.type}`}>{c.label}</label>
              <small className="hint" id={`trigger-${c.type}-hint`}>
                {c.hint}
                {gate === null ? null : (
                  <>
                    {' '}
                    <GateNote gate={gate} />
                  </>
                )}
              </small>
            </div>
          );
        })}
      </div>
      {messagesUnder(error, 'trigger.type') === undefined ? null : (
        <p className="field-error" id="trigger-type-error">
          {messagesUnder(error, 'trigger.type')}
        </p>
      )}
      {error?.code === 'TIER_REQUIRED' ? (
        <div>
          <ErrorNote error={error} title="Your plan does not include this trigger" />
          <p>
            <Link to="/billing">Change your plan</Link> to use it.
          </p>
        </div>
      ) : null}

      {draft.type === 'scheduled' ? (
        <>
          <Field
            label="Cron expression"
            hint="Five fields: minute hour day-of-month month day-of-week, e.g. */15 * * * * or 0 9 * * 1-5."
            error={cronPreview.ok ? messagesUnder(error, 'trigger.cron') : cronPreview.problem}
          >
            {(p) => (
              <input
                {...p}
                value={draft.cron}
                spellCheck={false}
                autoComplete="off"
                onChange={(e) => set({ cron: e.target.value })}
              />
            )}
          </Field>
          <Field label="Time zone" error={messagesUnder(error, 'trigger.timezone')}>
            {(p) => (
              <select {...p} value={draft.timezone} onChange={(e) => set({ timezone: e.target.value })}>
                {zones.includes(draft.timezone) ? null : <option value={draft.timezone}>{draft.timezone}</option>}
                {zones.map((z) => (
                  <option key={z} value={z}>
                    {z}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <CronPreviewList cron={draft.cron} timezone={draft.timezone} />
        </>
      ) : null}

      {draft.type === 'webhook' ? (
        <>
          <div className="check">
            <input
              type="checkbox"
              id="allow-action-override"
              checked={draft.allowActionOverride}
              onChange={(e) => set({ allowActionOverride: e.target.checked })}
              aria-describedby="allow-action-override-hint"
            />
            <label htmlFor="allow-action-override">Allow action override from webhook</label>
          </div>
          <small className="hint" id="allow-action-override-hint">
            A string <code>action</code> in the payload then replaces the system prompt for that run. Enable it only for
            trusted senders.
          </small>
          <Field
            label="Payload schema (JSON)"
            hint={
              <>
                A JSON array of the payload's fields: <code>name</code>, <code>type</code> (string, number, integer,
                boolean, object, array), optional <code>description</code> and <code>required</code>. Payloads that do
                not match are refused.
              </>
            }
            error={schema.ok ? messagesUnder(error, 'trigger.schema') : schema.problem}
          >
            {(p) => (
              <textarea
                {...p}
                rows={10}
                spellCheck={false}
                value={draft.schemaText}
                onChange={(e) => set({ schemaText: e.target.value })}
              />
            )}
          </Field>
          <p className="hint">The webhook URL and its secret are shown on the agent's page once you save.</p>
        </>
      ) : null}
    </fieldset>
  );
}
