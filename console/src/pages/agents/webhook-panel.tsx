/**
 * A webhook agent's URL, its secret (shown once, after the save or rotation that made it), rotation,
 * its payload fields and its recent deliveries.
 */
import { useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { SecretShownOnce } from '../../components/secret-shown-once';
import { type AgentDetail, CopyField } from './parts';
import { forgetSecret, peekSecret } from './secret-handover';
import { WebhookDeliveries } from './webhook-deliveries';

export function WebhookPanel({ agent }: { agent: AgentDetail }) {
  // Read once when the page opens, then forgotten: leaving the page and coming back shows no secret.
  const [secret, setSecret] = useState(() => peekSecret(agent.id));
  useEffect(() => forgetSecret(agent.id), [agent.id]);
  const rotate = useAction(async () => {
    const answer = await unwrap(
      api.POST('/api/agents/{id}/webhook-secret/rotate', { params: { path: { id: agent.id } } }),
    );
    setSecret(answer.webhookSecret);
  });
  if (agent.trigger.type !== 'webhook') {
    return null;
  }
  const schema = agent.trigger.schema;
  return (
    <section className="panel" aria-labelledby="webhook-heading">
      <h2 id="webhook-heading">Webhook</h2>
      {agent.webhookUrl === undefined ? null : <CopyField label="Webhook URL" value={agent.webhookUrl} />}
      <SecretShownOnce
        secret={secret}
        name="secret"
        label="Webhook secret"
        use={
          <>
            Send it in the <code>X-Webhook-Secret</code> header of every POST to the URL.
          </>
        }
        hint="The secret was shown once, when it was made. Lost it? Rotate it: the old one stops working at once."
        onHide={() => setSecret(undefined)}
        rotation={{
          label: 'Rotate secret',
          question:
            'A new secret replaces the current one, which stops working at once: senders must be given the new one.',
          busy: rotate.busy,
          onConfirm: () => void rotate.run(),
          error: rotate.error,
          errorTitle: 'Could not rotate the secret',
        }}
      />
      <h3>Payload</h3>
      <p>
        Action override from the payload: <strong>{agent.trigger.allowActionOverride ? 'allowed' : 'off'}</strong>
      </p>
      {schema.length === 0 ? (
        <p className="hint">No fields defined: any JSON object is accepted.</p>
      ) : (
        // A list, not a table: it reads at any width.
        <ul className="plain" aria-label="Payload fields">
          {schema.map((f) => (
            <li key={f.name}>
              <code>{f.name}</code>: {f.type}, {f.required ? 'required' : 'optional'}
              {f.description ? ` — ${f.description}` : ''}
            </li>
          ))}
        </ul>
      )}
      <WebhookDeliveries agentId={agent.id} />
    </section>
  );
}
