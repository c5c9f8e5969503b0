import { describe, expect, it } from '@jest/globals';
import { APPROVAL_TIMEOUT } from '../../workflows/contracts.js';
import { agentPoliciesOf } from './run-context.js';

const none = { approvalScopes: null, approvalTimeoutSeconds: null, notifyUrl: null, notifyEvents: null };

describe('agentPoliciesOf: what a run keeps of its agent’s approvals and notifications', () => {
  it('carries nothing for an agent without a policy or a notify URL', () => {
    expect(agentPoliciesOf(none)).toEqual({});
  });

  it('carries no policy for an empty list of scopes, whatever the timeout', () => {
    expect(agentPoliciesOf({ ...none, approvalScopes: [], approvalTimeoutSeconds: 120 })).toEqual({});
  });

  it('carries the scopes with the agent’s timeout, or the default one', () => {
    expect(agentPoliciesOf({ ...none, approvalScopes: ['write', 'delete'], approvalTimeoutSeconds: 120 })).toEqual({
      approvals: { scopes: ['write', 'delete'], timeoutSeconds: 120 },
    });
    expect(agentPoliciesOf({ ...none, approvalScopes: ['admin'] })).toEqual({
      approvals: { scopes: ['admin'], timeoutSeconds: APPROVAL_TIMEOUT.defaultSeconds },
    });
  });

  it('carries the events to notify of only when the agent has a URL, and never the URL', () => {
    expect(agentPoliciesOf({ ...none, notifyEvents: ['run_failed'] })).toEqual({});
    const policies = agentPoliciesOf({
      ...none,
      notifyUrl: 'https://hooks.example.com/x?k=1',
      notifyEvents: ['run_failed'],
    });
    expect(policies).toEqual({ notify: ['run_failed'] });
    expect(JSON.stringify(policies)).not.toContain('hooks.example.com');
  });
});
