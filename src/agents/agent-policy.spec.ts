import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { AppError } from '../common/app-error.js';
import type { Settings } from '../config/settings.js';
import { SiteHttpClient } from '../sites/site-http.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import { AgentPolicies, policyResponse } from './agent-policy.js';
import type { AgentEntity } from './agent.entity.js';
import { openNotifySecret } from './notify-secret.js';

const settings = { vaultKeys: [{ id: 'k1', key: randomBytes(32) }], siteAllowPrivateHosts: [] } as unknown as Settings;
const cipher = new VaultCipher(settings);
const http = new SiteHttpClient(settings);
const policies = new AgentPolicies(http, cipher);
const AGENT = '0b9f3e6a-8d4c-4f5e-9a1b-2c3d4e5f6a7b';

function columns(): Pick<
  AgentEntity,
  'approvalScopes' | 'approvalTimeoutSeconds' | 'notifyUrl' | 'notifyEvents' | 'notifySecret'
> {
  return {
    approvalScopes: null,
    approvalTimeoutSeconds: null,
    notifyUrl: null,
    notifyEvents: null,
    notifySecret: null,
  };
}

describe('AgentPolicies', () => {
  afterAll(() => http.onModuleDestroy());

  it('stores a policy with the default timeout shown; scopes [] and null are none', () => {
    const agent = columns();
    policies.apply(AGENT, agent, { approvals: { scopes: ['write'] } });
    expect(policyResponse(agent).approvals).toEqual({ scopes: ['write'], timeoutSeconds: 86_400 });
    policies.apply(AGENT, agent, { approvals: { scopes: [], timeoutSeconds: 60 } });
    expect(policyResponse(agent).approvals).toBeNull();
    policies.apply(AGENT, agent, { approvals: { scopes: ['admin'], timeoutSeconds: 60 } });
    policies.apply(AGENT, agent, { approvals: null });
    expect(agent.approvalScopes).toBeNull();
    expect(agent.approvalTimeoutSeconds).toBeNull();
  });

  it('generates the secret when notify is first set, sealed for the agent; keeps it on a change; drops it with notify', () => {
    const agent = columns();
    const secret = policies.apply(AGENT, agent, {
      notify: { url: 'https://hooks.example.com/a', events: ['run_failed'] },
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret!.slice(6), 'base64')).toHaveLength(32);
    expect(agent.notifySecret).not.toContain(secret!.slice(6));
    expect(openNotifySecret(cipher, AGENT, agent.notifySecret!)).toBe(secret);
    expect(() => openNotifySecret(cipher, 'another-agent', agent.notifySecret!)).toThrow();
    const sealed = agent.notifySecret;
    expect(
      policies.apply(AGENT, agent, { notify: { url: 'https://hooks.example.com/b', events: ['run_completed'] } }),
    ).toBeUndefined();
    expect(agent.notifySecret).toBe(sealed);
    expect(policyResponse(agent).notify).toEqual({ url: 'https://hooks.example.com/b', events: ['run_completed'] });
    policies.apply(AGENT, agent, { notify: null });
    expect([agent.notifyUrl, agent.notifyEvents, agent.notifySecret]).toEqual([null, null, null]);
    expect(policyResponse(agent).notify).toBeNull();
  });

  it.each([
    'http://hooks.example.com/a',
    'hooks.example.com/a',
    'https://user:pw@hooks.example.com/a',
    'https://127.0.0.1/a',
    'https://10.0.0.8/a',
    'https://169.254.169.254/latest',
  ])('refuses %s as VALIDATION_ERROR on notify.url, and changes nothing', (url) => {
    const agent = columns();
    let error: unknown;
    try {
      policies.apply(AGENT, agent, { notify: { url, events: ['run_failed'] }, approvals: { scopes: ['write'] } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('VALIDATION_ERROR');
    expect((error as AppError).details?.map((d) => d.field)).toEqual(['notify.url']);
    expect(agent).toEqual(columns());
  });

  it('rotates only an agent with notify', () => {
    const agent = { ...columns(), id: AGENT } as AgentEntity;
    expect(() => policies.rotate(agent)).toThrow(AppError);
    policies.apply(AGENT, agent, { notify: { url: 'https://hooks.example.com/a', events: ['run_failed'] } });
    const { secret, sealed } = policies.rotate(agent);
    expect(openNotifySecret(cipher, AGENT, sealed)).toBe(secret);
  });
});
