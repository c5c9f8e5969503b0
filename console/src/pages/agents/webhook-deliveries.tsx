/** The webhook's recent deliveries, accepted and refused, so the owner can see why a sender's calls fail. */
import { Link } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useLoad } from '../../api/hooks';
import { Busy, ErrorNote, formatDate, Pager, usePager } from '../../components/ui';

type Delivery = Schemas['WebhookDeliveryDto'];

const PAGE_SIZE = 10;

/** Why a delivery was refused, as the sender's side would put it. */
const REFUSALS: Record<string, string> = {
  WEBHOOK_SECRET_INVALID: 'Refused: the secret was missing or wrong',
  WEBHOOK_PAYLOAD_INVALID: 'Refused: the payload did not fit the agent’s payload fields',
  TIER_REQUIRED: 'Refused: the plan does not include webhook agents',
  SUBSCRIPTION_PAST_DUE: 'Refused: the plan’s payment is overdue',
  NO_CREDITS: 'Refused: no credits left to run the agent',
  RATE_LIMITED: 'Refused for now: too many runs are waiting (the sender should retry later)',
  VALIDATION_ERROR: 'Refused: the delivery id the sender gave is not valid',
};

/** A delivery's outcome in words. */
export function outcomeOf(delivery: Delivery): string {
  if (delivery.outcome === 'accepted') {
    return 'Accepted: a run was queued';
  }
  if (delivery.outcome === 'duplicate') {
    return 'Accepted again: a repeated delivery, answered with its first run';
  }
  return REFUSALS[delivery.code ?? ''] ?? 'Failed: the service could not take it at the time (the sender may retry)';
}

export function WebhookDeliveries({ agentId }: { agentId: string }) {
  const pager = usePager();
  const { cursor } = pager;
  const deliveries = useLoad(
    () =>
      unwrap(
        api.GET('/api/agents/{id}/webhook-deliveries', {
          params: { path: { id: agentId }, query: { limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) } },
        }),
      ),
    [agentId, cursor],
  );
  const { reload } = deliveries;
  return (
    <>
      <h3 id="deliveries-heading">Recent deliveries</h3>
      <p className="hint">
        Every call to the webhook URL, accepted or refused, newest first (the last 100 are kept). Nothing the sender
        sent is kept but the names of the fields a refused payload got wrong; an accepted payload is in its run.
      </p>
      <div className="actions">
        <button type="button" className="secondary" disabled={deliveries.loading} onClick={() => void reload()}>
          Refresh deliveries
        </button>
      </div>
      {deliveries.data === undefined ? (
        deliveries.error ? (
          <ErrorNote error={deliveries.error} title="Could not load the deliveries" />
        ) : (
          <Busy label="Loading deliveries…" />
        )
      ) : (
        <>
          {deliveries.error ? <ErrorNote error={deliveries.error} title="Could not refresh the deliveries" /> : null}
          {deliveries.data.items.length === 0 ? (
            <p>No deliveries yet.</p>
          ) : (
            <ol className="deliveries" aria-labelledby="deliveries-heading">
              {deliveries.data.items.map((d) => (
                <DeliveryItem key={d.id} delivery={d} />
              ))}
            </ol>
          )}
          <Pager
            pager={pager}
            nextCursor={deliveries.data.nextCursor}
            label="Delivery pages"
            previousLabel="Newer deliveries"
            nextLabel="Older deliveries"
          />
        </>
      )}
    </>
  );
}

function DeliveryItem({ delivery }: { delivery: Delivery }) {
  const refused = delivery.outcome === 'refused';
  return (
    <li className={refused ? 'refused' : 'accepted'}>
      <p>
        <strong>{outcomeOf(delivery)}</strong>
      </p>
      {delivery.fields.length === 0 ? null : (
        <p>
          Fields at fault: <code>{delivery.fields.join(', ')}</code>
        </p>
      )}
      <p className="hint">
        <time dateTime={delivery.receivedAt}>{formatDate(delivery.receivedAt)}</time> · status {delivery.statusCode}
        {delivery.runId === null ? null : (
          <>
            {' · '}
            <Link to={`/runs/${delivery.runId}`}>Run {delivery.runId.slice(0, 8)}</Link>
          </>
        )}
      </p>
      {delivery.requestId === null ? null : (
        <p className="hint">
          Request id <code>{delivery.requestId}</code>
        </p>
      )}
    </li>
  );
}
