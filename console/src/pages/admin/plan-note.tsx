import { api, type Schemas, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { ErrorNote, formatDate } from '../../components/ui';

type User = Schemas['AdminUserDto'];

const STATUS_WORDS = { active: 'active', past_due: 'past due', canceled: 'canceled' } satisfies Record<
  Schemas['SubscriptionStatus'],
  string
>;

/**
 * Under a user's tier: the plan their subscription pays for, and whether a tier an administrator set
 * holds against it (with what it held back), and the way back to the subscription's plan.
 */
export function PlanNote({ user, onChanged }: { user: User; onChanged: (user: User) => Promise<void> }) {
  const { plan } = user;
  const clear = useAction(async () => {
    await onChanged(
      await unwrap(api.DELETE('/api/admin/users/{id}/tier-override', { params: { path: { id: user.id } } })),
    );
  });
  const paid =
    plan.subscriptionTier === null
      ? 'No subscription'
      : `Subscription: ${plan.subscriptionTier}${
          plan.providerStatus === null ? '' : `, ${STATUS_WORDS[plan.providerStatus]}`
        }`;
  const held = plan.override?.overridden ?? null;
  return (
    <div className="hint">
      <div>{paid}</div>
      {plan.override === null ? null : (
        <>
          <div>
            Set by an administrator: <strong>{plan.override.tier}</strong> holds over the subscription
          </div>
          {held === null ? null : (
            <div>
              Held back on {formatDate(held.at)}: {held.tier}, {STATUS_WORDS[held.status]}
            </div>
          )}
          <button type="button" className="secondary" disabled={clear.busy} onClick={() => void clear.run()}>
            {clear.busy ? 'Returning…' : 'Use the subscription’s plan'}
            <span className="visually-hidden"> for {user.email}</span>
          </button>
          <ErrorNote error={clear.error} title={`Could not return ${user.email} to their subscription’s plan`} />
        </>
      )}
    </div>
  );
}
