/**
 * The agent form's "Approvals" (which calls wait for a person, and how long) and "Notifications"
 * (an HTTPS address told when a call waits or a run ends, signed with the agent's own secret).
 */
import { type ApiError } from '../../api/client';
import { Field } from '../../components/ui';
import { type ApprovalScope, durationWords, SCOPE_CHOICES } from '../approvals/words';
import { type Agent } from './parts';

type Policy = NonNullable<Agent['approvals']>;
type Notify = NonNullable<Agent['notify']>;
export type NotifyEvent = Notify['events'][number];

const SCOPES: ApprovalScope[] = ['write', 'delete', 'admin'];
const EVENTS: Array<[NotifyEvent, string]> = [
  ['approval_requested', 'A call waits for approval'],
  ['run_completed', 'A run completed'],
  ['run_failed', 'A run failed'],
];
const DEFAULT_TIMEOUT = 86_400;
const MIN_TIMEOUT = 60;
const MAX_TIMEOUT = 7 * 86_400;

export interface PolicyDraft {
  scopes: ApprovalScope[];
  hours: string;
  minutes: string;
  url: string;
  events: NotifyEvent[];
}

export function policyDraftOf(agent: Agent | undefined): PolicyDraft {
  const seconds = agent?.approvals?.timeoutSeconds ?? DEFAULT_TIMEOUT;
  return {
    scopes: agent?.approvals?.scopes ?? [],
    hours: String(Math.floor(seconds / 3600)),
    minutes: String(Math.floor((seconds % 3600) / 60)),
    url: agent?.notify?.url ?? '',
    events: agent?.notify?.events ?? ['approval_requested'],
  };
}

export interface PolicyBody {
  approvals: Policy | null;
  notify: Notify | null;
}

/** What to send for both sections, or the first problem that stops the form from being sent. */
export function policyOf(draft: PolicyDraft): { body: PolicyBody } | { problem: string } {
  let approvals: Policy | null = null;
  if (draft.scopes.length > 0) {
    const hours = Number(draft.hours.trim() === '' ? '0' : draft.hours);
    const minutes = Number(draft.minutes.trim() === '' ? '0' : draft.minutes);
    if (!Number.isInteger(hours) || !Number.isInteger(minutes) || hours < 0 || minutes < 0) {
      return { problem: 'Wait for a decision: write whole hours and minutes.' };
    }
    const timeoutSeconds = hours * 3600 + minutes * 60;
    if (timeoutSeconds < MIN_TIMEOUT || timeoutSeconds > MAX_TIMEOUT) {
      return { problem: 'Wait for a decision: from 1 minute to 7 days (168 hours).' };
    }
    approvals = { scopes: SCOPES.filter((s) => draft.scopes.includes(s)), timeoutSeconds };
  }
  let notify: Notify | null = null;
  if (draft.url.trim() !== '') {
    if (draft.events.length === 0) {
      return { problem: 'Notifications: choose at least one event to be told about, or empty the address.' };
    }
    notify = { url: draft.url.trim(), events: EVENTS.map(([e]) => e).filter((e) => draft.events.includes(e)) };
  }
  return { body: { approvals, notify } };
}

/** The sections' parts that changed since the agent was saved (a PATCH sends only those). */
export function changedPolicy(agent: Agent, body: PolicyBody): Partial<PolicyBody> {
  const a = agent.approvals;
  const n = agent.notify;
  const before: PolicyBody = {
    approvals:
      a === null || a === undefined || a.scopes.length === 0
        ? null
        : { scopes: SCOPES.filter((s) => a.scopes.includes(s)), timeoutSeconds: a.timeoutSeconds },
    notify:
      n === null || n === undefined
        ? null
        : { url: n.url, events: EVENTS.map(([e]) => e).filter((e) => n.events.includes(e)) },
  };
  const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  return {
    ...(same(before.approvals, body.approvals) ? {} : { approvals: body.approvals }),
    ...(same(before.notify, body.notify) ? {} : { notify: body.notify }),
  };
}

/** A list of checkboxes, one a choice (`[value, words]`), `<idPrefix>-<value>` the ids. */
function CheckboxGroup<T extends string>({
  idPrefix,
  label,
  choices,
  checked,
  onChange,
}: {
  idPrefix: string;
  label?: string;
  choices: Array<[T, string]>;
  checked: T[];
  onChange: (checked: T[]) => void;
}) {
  const toggle = (item: T, on: boolean) =>
    onChange(on ? [...checked.filter((x) => x !== item), item] : checked.filter((x) => x !== item));
  return (
    <ul className="plain" aria-label={label}>
      {choices.map(([value, words]) => (
        <li key={value} className="check">
          <input
            type="checkbox"
            id={`${idPrefix}-${value}`}
            checked={checked.includes(value)}
            onChange={(e) => toggle(value, e.target.checked)}
          />
          <label htmlFor={`${idPrefix}-${value}`}>{words}</label>
        </li>
      ))}
    </ul>
  );
}

export function PolicyFields({
  draft,
  onChange,
  error,
}: {
  draft: PolicyDraft;
  onChange: (draft: PolicyDraft) => void;
  error: ApiError | undefined;
}) {
  const set = (part: Partial<PolicyDraft>) => onChange({ ...draft, ...part });
  const scopesError = error?.fieldMessage('approvals.scopes');
  const eventsError = error?.fieldMessage('notify.events');
  const waits = policyOf({ ...draft, url: '' });
  return (
    <>
      <fieldset aria-describedby="approvals-hint">
        <legend>Approvals</legend>
        <small className="hint" id="approvals-hint">
          Before a call of a kind checked here, the run waits until someone approves or denies it on the Approvals page.
          Reading never waits. Nothing checked: the agent never waits.
        </small>
        <CheckboxGroup
          idPrefix="approve"
          choices={SCOPES.map((scope) => [scope, SCOPE_CHOICES[scope]])}
          checked={draft.scopes}
          onChange={(scopes) => set({ scopes })}
        />
        {scopesError === undefined ? null : <p className="field-error">{scopesError}</p>}
        {draft.scopes.length === 0 ? null : (
          <div className="inline-fields">
            <Field label="Wait for a decision: hours" error={error?.fieldMessage('approvals.timeoutSeconds')}>
              {(p) => (
                <input
                  {...p}
                  type="number"
                  inputMode="numeric"
                  min={0}
                  max={168}
                  value={draft.hours}
                  onChange={(e) => set({ hours: e.target.value })}
                />
              )}
            </Field>
            <Field label="and minutes">
              {(p) => (
                <input
                  {...p}
                  type="number"
                  inputMode="numeric"
                  min={0}
                  max={59}
                  value={draft.minutes}
                  onChange={(e) => set({ minutes: e.target.value })}
                />
              )}
            </Field>
            <p className="hint">
              {'body' in waits && waits.body.approvals !== null
                ? `Without a decision within ${durationWords(waits.body.approvals.timeoutSeconds)}, the call is not made and the run goes on.`
                : 'From 1 minute to 7 days.'}
            </p>
          </div>
        )}
      </fieldset>

      <fieldset aria-describedby="notify-hint">
        <legend>Notifications</legend>
        <small className="hint" id="notify-hint">
          An https:// address the service tells (a signed POST) when something happens. Empty: no notifications.
        </small>
        <Field label="Notification address" error={error?.fieldMessage('notify.url')}>
          {(p) => (
            <input
              {...p}
              type="url"
              inputMode="url"
              placeholder="https://"
              spellCheck={false}
              value={draft.url}
              onChange={(e) => set({ url: e.target.value })}
            />
          )}
        </Field>
        {draft.url.trim() === '' ? null : (
          <CheckboxGroup
            idPrefix="notify"
            label="Tell it when"
            choices={EVENTS}
            checked={draft.events}
            onChange={(events) => set({ events })}
          />
        )}
        {eventsError === undefined ? null : <p className="field-error">{eventsError}</p>}
      </fieldset>
    </>
  );
}

export const POLICY_FIELDS = ['approvals.scopes', 'approvals.timeoutSeconds', 'notify.url', 'notify.events'];
export const EVENT_WORDS: Record<NotifyEvent, string> = Object.fromEntries(EVENTS) as Record<NotifyEvent, string>;
