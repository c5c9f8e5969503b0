/**
 * An agent's approvals policy and notifications, on its page: which calls wait and for how long; the
 * notification address and its events; the signing secret (shown once, after the save or rotation
 * that made it) and its rotation.
 */
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../api/hooks';
import { SecretShownOnce } from '../../components/secret-shown-once';
import { durationWords, SCOPE_WORDS } from '../approvals/words';
import { type AgentDetail } from './parts';
import { EVENT_WORDS } from './policy-fields';
import { forgetSecret, peekSecret } from './secret-handover';

export function PolicyPanel({ agent }: { agent: AgentDetail }) {
  // Read once when the page opens, then forgotten: leaving the page and coming back shows no secret.
  const [secret, setSecret] = useState(() => peekSecret(agent.id, 'notify'));
  useEffect(() => forgetSecret(agent.id, 'notify'), [agent.id]);
  const rotate = useAction(async () => {
    const answer = await unwrap(
      api.POST('/api/agents/{id}/notify-secret/rotate', { params: { path: { id: agent.id } } }),
    );
    setSecret(answer.notifySecret);
  });
  const approvals = agent.approvals;
  const notify = agent.notify;
  return (
    <section className="panel" aria-labelledby="policy-heading">
      <h2 id="policy-heading">Approvals and notifications</h2>
      <dl className="facts">
        <dt>Waits for approval</dt>
        <dd>
          {approvals === null || approvals === undefined || approvals.scopes.length === 0 ? (
            'never'
          ) : (
            <>
              before a call that {approvals.scopes.map((s) => SCOPE_WORDS[s]).join(', or ')}, at most{' '}
              {durationWords(approvals.timeoutSeconds)} (then the call is not made).{' '}
              <Link to="/approvals">Approvals</Link>
            </>
          )}
        </dd>
        <dt>Notifications</dt>
        <dd>
          {notify === null || notify === undefined ? (
            'none'
          ) : (
            <>
              <code>{notify.url}</code>, when: {notify.events.map((e) => EVENT_WORDS[e].toLowerCase()).join('; ')}
            </>
          )}
        </dd>
      </dl>
      {notify === null || notify === undefined ? null : (
        <>
          <SecretShownOnce
            secret={secret}
            name="signing secret"
            label="Signing secret"
            use="The receiver checks each notification's signature with it."
            hint={
              "Each notification is signed with the agent's signing secret (Standard Webhooks), shown once when it " +
              'was made. Lost it? Rotate it: the old one stops working at once.'
            }
            onHide={() => setSecret(undefined)}
            rotation={{
              label: 'Rotate signing secret',
              question:
                'A new signing secret replaces the current one at once: the receiver must be given the new one.',
              busy: rotate.busy,
              onConfirm: () => void rotate.run(),
              error: rotate.error,
              errorTitle: 'Could not rotate the signing secret',
            }}
          />
        </>
      )}
    </section>
  );
}
