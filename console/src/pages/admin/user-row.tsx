import { type FormEvent, useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote } from '../../components/ui';
import { PlanNote } from './plan-note';

type User = Schemas['AdminUserDto'];
type Patch = Schemas['AdminUserPatchDto'];

const TIERS = { free: 'free', pro: 'pro', harness: 'harness', team: 'team' } satisfies Record<Schemas['Tier'], string>;
const ROLES = { user: 'user', admin: 'admin' } satisfies Record<Schemas['UserRole'], string>;
const STATUSES = { active: 'active', past_due: 'past due', canceled: 'canceled' } satisfies Record<
  Schemas['SubscriptionStatus'],
  string
>;

function Choice<T extends string>({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: T;
  options: Record<T, string>;
  onChange: (value: T) => void;
}) {
  return (
    <>
      <label className="visually-hidden" htmlFor={id}>
        {label}
      </label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as T)}>
        {(Object.keys(options) as T[]).map((key) => (
          <option key={key} value={key}>
            {options[key]}
          </option>
        ))}
      </select>
    </>
  );
}

/** One user: the four fields an admin can change, saved together (only what changed is sent). */
export function UserRow({ user, onChanged }: { user: User; onChanged: (user: User) => Promise<void> }) {
  const [tier, setTier] = useState(user.tier);
  const [credits, setCredits] = useState(String(user.credits));
  const [role, setRole] = useState(user.role);
  const [status, setStatus] = useState(user.subscriptionStatus);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    const body: Patch = {};
    if (tier !== user.tier) {
      body.tier = tier;
    }
    if (credits !== String(user.credits)) {
      body.credits = Number(credits);
    }
    if (role !== user.role) {
      body.role = role;
    }
    if (status !== user.subscriptionStatus) {
      body.subscriptionStatus = status;
    }
    const answer = await unwrap(api.PATCH('/api/admin/users/{id}', { params: { path: { id: user.id } }, body }));
    setSaved(true);
    await onChanged(answer);
  });
  // Returned to the subscription's plan: the choices show the tier and status now in force.
  const returned = async (changed: User) => {
    setTier(changed.tier);
    setStatus(changed.subscriptionStatus);
    await onChanged(changed);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    void save.run();
  };
  const formId = `user-${user.id}`;
  const creditsError = save.error?.fieldMessage('credits');
  return (
    <tr>
      <td>
        {user.email}
        {user.name === null ? null : <div className="hint">{user.name}</div>}
      </td>
      <td>
        <Choice id={`${formId}-tier`} label={`Tier of ${user.email}`} value={tier} options={TIERS} onChange={setTier} />
        <PlanNote user={user} onChanged={returned} />
      </td>
      <td>
        <label className="visually-hidden" htmlFor={`${formId}-credits`}>
          Credits of {user.email}
        </label>
        <input
          id={`${formId}-credits`}
          form={formId}
          type="number"
          inputMode="numeric"
          min={0}
          step={1}
          required
          value={credits}
          aria-invalid={creditsError === undefined ? undefined : true}
          aria-describedby={creditsError === undefined ? undefined : `${formId}-credits-error`}
          onChange={(e) => setCredits(e.target.value)}
        />
        {creditsError === undefined ? null : (
          <small id={`${formId}-credits-error`} className="field-error">
            {creditsError}
          </small>
        )}
      </td>
      <td>
        <Choice id={`${formId}-role`} label={`Role of ${user.email}`} value={role} options={ROLES} onChange={setRole} />
      </td>
      <td>
        <Choice
          id={`${formId}-status`}
          label={`Subscription status of ${user.email}`}
          value={status}
          options={STATUSES}
          onChange={setStatus}
        />
      </td>
      <td>
        <form id={formId} onSubmit={submit}>
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save'}
            <span className="visually-hidden"> {user.email}</span>
          </button>
        </form>
        {saved && save.error === undefined ? (
          <span className="badge ok" role="status">
            Saved
          </span>
        ) : null}
        <ErrorNote error={save.error} title={`Could not change ${user.email}`} fields={['credits']} />
      </td>
    </tr>
  );
}
