import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { SiteHttpClient } from '../sites/site-http.js';
import { VaultCipher } from '../vault/vault-cipher.js';
import { APPROVAL_TIMEOUT, type ApprovalPolicy, type NotificationEvent } from '../../workflows/contracts.js';
import type { AgentEntity } from './agent.entity.js';
import type { ApprovalPolicyDto, NotifyDto } from './dto/agent-policy.dto.js';
import { newNotifySecret, sealNotifySecret } from './notify-secret.js';

/** An agent's approval policy and notifications, as its answer shows them (never the secret). */
export interface AgentPolicyResponse {
  approvals: ApprovalPolicy | null;
  notify: { url: string; events: NotificationEvent[] } | null;
}

type PolicyColumns = Pick<
  AgentEntity,
  'approvalScopes' | 'approvalTimeoutSeconds' | 'notifyUrl' | 'notifyEvents' | 'notifySecret'
>;

export function policyResponse(agent: PolicyColumns): AgentPolicyResponse {
  const scopes = agent.approvalScopes ?? [];
  return {
    approvals:
      scopes.length === 0
        ? null
        : { scopes, timeoutSeconds: agent.approvalTimeoutSeconds ?? APPROVAL_TIMEOUT.defaultSeconds },
    notify:
      agent.notifyUrl === null || agent.notifyEvents === null
        ? null
        : { url: agent.notifyUrl, events: agent.notifyEvents },
  };
}

/**
 * The `approvals` and `notify` fields of an agent: their checks beyond the DTO's (the notify URL goes
 * through the sites' URL check), and the notify secret (generated when notify is first set, sealed
 * with the vault key, rotated on request).
 */
@Injectable()
export class AgentPolicies {
  constructor(
    private readonly http: SiteHttpClient,
    private readonly cipher: VaultCipher,
  ) {}

  /**
   * Applies the request's `approvals` and `notify` (undefined: unchanged; null: removed) to the agent
   * in memory. Returns the new notify secret when notify was set on an agent that had none.
   */
  apply(
    agentId: string,
    agent: PolicyColumns,
    dto: { approvals?: ApprovalPolicyDto | null; notify?: NotifyDto | null },
  ): string | undefined {
    if (dto.notify !== undefined && dto.notify !== null) {
      this.checkUrl(dto.notify.url);
    }
    if (dto.approvals !== undefined) {
      const scopes = dto.approvals?.scopes ?? [];
      agent.approvalScopes = scopes.length === 0 ? null : scopes;
      agent.approvalTimeoutSeconds = scopes.length === 0 ? null : (dto.approvals?.timeoutSeconds ?? null);
    }
    if (dto.notify === null) {
      agent.notifyUrl = null;
      agent.notifyEvents = null;
      agent.notifySecret = null;
      return undefined;
    }
    if (dto.notify === undefined) {
      return undefined;
    }
    agent.notifyUrl = dto.notify.url.trim();
    agent.notifyEvents = dto.notify.events;
    if (agent.notifySecret !== null && agent.notifySecret !== undefined) {
      return undefined;
    }
    const secret = newNotifySecret();
    agent.notifySecret = sealNotifySecret(this.cipher, agentId, secret);
    return secret;
  }

  /** A new secret for an agent with notify (sealed for its row), or VALIDATION_ERROR. */
  rotate(agent: AgentEntity): { secret: string; sealed: string } {
    if (agent.notifyUrl === null) {
      throw AppError.validation(
        [{ field: 'notify', message: 'the agent sends no notifications: set notify first' }],
        'This agent sends no notifications, so it has no signing secret',
      );
    }
    const secret = newNotifySecret();
    return { secret, sealed: sealNotifySecret(this.cipher, agent.id, secret) };
  }

  /** The sites' URL check (https, no credentials, no refused address), answered as VALIDATION_ERROR on notify.url. */
  private checkUrl(raw: string): void {
    try {
      this.http.assertSiteUrl(raw.trim(), 'notify.url');
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_URL') {
        throw AppError.validation(err.details ?? [{ field: 'notify.url', message: err.message }], err.message);
      }
      throw err;
    }
  }
}
