import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { CronExpressionParser } from 'cron-parser';
import { requireBelow, requireFeature } from '../billing/tiers.js';
import { AppError, type FieldProblem } from '../common/app-error.js';
import { type Page, type PageQuery, pageOf } from '../common/pagination.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import type { UserEntity } from '../users/user.entity.js';
import { limitsUser, requireRole, requireWorkspace, type Scope } from '../workspaces/scope.js';
import type { AgentEntity, TriggerType, WebhookField } from './agent.entity.js';
import { AgentPolicies, type AgentPolicyResponse, policyResponse } from './agent-policy.js';
import { AgentsRepository } from './agents.repository.js';
import type { CreateAgentDto, TriggerDto, UpdateAgentDto } from './dto/agent.dto.js';
import { SchedulesService } from './schedules.service.js';
import { UUID } from '../common/ids.js';

export interface AgentResponse extends AgentPolicyResponse {
  id: string;
  name: string;
  systemPrompt: string;
  siteIds: string[];
  model: string;
  trigger:
    | { type: 'manual' }
    | { type: 'scheduled'; cron: string; timezone: string }
    | { type: 'webhook'; allowActionOverride: boolean; schema: WebhookField[] };
  webhookUrl?: string;
  /** Only in the answer of the save that generated it. */
  webhookSecret?: string;
  /** Only in the answer of the save that first set notify. */
  notifySecret?: string;
  createdAt: string;
  updatedAt: string;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time: compares fixed-length hashes, so neither content nor length leaks through timing. */
export function secretMatches(provided: string | undefined, storedHash: string | null): boolean {
  if (provided === undefined || storedHash === null) {
    return false;
  }
  const a = Buffer.from(hashSecret(provided), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Checks a 5-field cron expression (with a cron library) and an IANA time zone. */
export function cronProblems(cron: string | undefined, timezone: string | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: timezone });
    } catch {
      problems.push({ field: 'trigger.timezone', message: 'must be an IANA time zone such as Europe/Berlin' });
    }
  }
  if (cron === undefined) {
    problems.push({ field: 'trigger.cron', message: 'is required for scheduled agents' });
  } else if (cron.trim().split(/\s+/).length !== 5) {
    problems.push({ field: 'trigger.cron', message: 'must have 5 fields: minute hour day-of-month month day-of-week' });
  } else {
    try {
      CronExpressionParser.parse(cron, { tz: problems.length === 0 ? timezone : undefined, strict: false });
    } catch (err) {
      problems.push({ field: 'trigger.cron', message: `is not a valid cron expression: ${(err as Error).message}` });
    }
  }
  return problems;
}

@Injectable()
export class AgentsService {
  private readonly logger = new Logger('Agents');

  constructor(
    private readonly agents: AgentsRepository,
    private readonly schedules: SchedulesService,
    private readonly policies: AgentPolicies,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  webhookUrl(agentId: string): string {
    return `${this.settings.publicBaseUrl}/api/webhooks/agent/${agentId}`;
  }

  toResponse(agent: AgentEntity, webhookSecret?: string, notifySecret?: string): AgentResponse {
    const trigger: AgentResponse['trigger'] =
      agent.triggerType === 'scheduled'
        ? { type: 'scheduled', cron: agent.cron!, timezone: agent.timezone ?? 'UTC' }
        : agent.triggerType === 'webhook'
          ? { type: 'webhook', allowActionOverride: agent.allowActionOverride, schema: agent.webhookSchema ?? [] }
          : { type: 'manual' };
    return {
      id: agent.id,
      name: agent.name,
      systemPrompt: agent.systemPrompt,
      siteIds: agent.siteIds,
      model: agent.model ?? this.settings.defaultModel,
      trigger,
      ...(agent.triggerType === 'webhook' ? { webhookUrl: this.webhookUrl(agent.id) } : {}),
      ...(webhookSecret !== undefined ? { webhookSecret } : {}),
      ...policyResponse(agent),
      ...(notifySecret !== undefined ? { notifySecret } : {}),
      createdAt: agent.createdAt.toISOString(),
      updatedAt: agent.updatedAt.toISOString(),
    };
  }

  /** An agent of the scope, or AGENT_NOT_FOUND (also for another user's or workspace's: its existence is not revealed). */
  async findInScope(scope: Scope, agentId: string): Promise<AgentEntity> {
    const agent = UUID.test(agentId) ? await this.agents.findInScope(scope, agentId) : null;
    if (agent === null) {
      throw new AppError('AGENT_NOT_FOUND', 'No agent with this id');
    }
    return agent;
  }

  /** Moves one of the caller's personal agents (and so its runs) into the scope's workspace. */
  async share(scope: Scope, agentId: string): Promise<AgentResponse> {
    const workspace = requireWorkspace(scope);
    requireRole(scope, 'member', 'Sharing an agent');
    const agent = await this.findInScope({ user: scope.user, workspace: null }, agentId);
    await this.assertSites(scope, agent.siteIds);
    agent.workspaceId = workspace.id;
    await this.agents.save(agent);
    return this.toResponse(agent);
  }

  /**
   * What a webhook needs in one round trip: the agent, the user whose tier counts (the workspace
   * owner's for a workspace agent, else the agent owner), and the credit balance of the agent's user
   * (who pays for its runs). Null for an unknown agent.
   */
  async webhookTarget(
    agentId: string,
  ): Promise<{ agent: AgentEntity; tierOwner: UserEntity; payerCredits: number } | null> {
    if (!UUID.test(agentId)) {
      return null;
    }
    return this.agents.webhookTarget(agentId);
  }

  async list(scope: Scope, query: PageQuery): Promise<Page<AgentResponse>> {
    return pageOf(await this.agents.page(scope, query), query.limit, (a) => this.toResponse(a));
  }

  private async assertSites(scope: Scope, siteIds: string[]): Promise<void> {
    const unique = [...new Set(siteIds)];
    const found = unique.length === 0 ? [] : await this.agents.sitesInScope(scope, unique);
    const missing = unique.filter((id) => !found.some((s) => s.id === id));
    if (missing.length > 0 || unique.length !== siteIds.length) {
      throw AppError.validation(
        missing.length > 0
          ? missing.map((id) => ({ field: 'siteIds', message: `no site ${id} in your vault` }))
          : [{ field: 'siteIds', message: 'lists a site twice' }],
      );
    }
  }

  /** Validates a trigger for the owner's tier; returns what to store. */
  private checkTrigger(
    owner: UserEntity,
    trigger: TriggerDto,
  ): Pick<AgentEntity, 'triggerType' | 'cron' | 'timezone' | 'allowActionOverride' | 'webhookSchema'> {
    if (trigger.type === 'webhook') {
      requireFeature(owner, (l) => l.webhookAgents, 'Webhook agents (harness tier or higher)');
    }
    if (trigger.type === 'scheduled') {
      requireFeature(owner, (l) => l.scheduledAgents, 'Scheduled agents');
    }
    const problems: FieldProblem[] = [];
    if (trigger.type === 'scheduled') {
      problems.push(...cronProblems(trigger.cron, trigger.timezone));
    } else {
      if (trigger.cron !== undefined) {
        problems.push({ field: 'trigger.cron', message: 'is only for scheduled agents' });
      }
      if (trigger.timezone !== undefined) {
        problems.push({ field: 'trigger.timezone', message: 'is only for scheduled agents' });
      }
    }
    if (trigger.type !== 'webhook' && (trigger.schema !== undefined || trigger.allowActionOverride !== undefined)) {
      problems.push({ field: 'trigger.schema', message: 'schema and allowActionOverride are only for webhook agents' });
    }
    if (trigger.type === 'webhook') {
      const names = (trigger.schema ?? []).map((f) => f.name);
      names.forEach((name, i) => {
        if (names.indexOf(name) !== i) {
          problems.push({ field: `trigger.schema[${i}].name`, message: `repeats the field "${name}"` });
        }
      });
    }
    if (problems.length > 0) {
      throw AppError.validation(problems);
    }
    return {
      triggerType: trigger.type,
      cron: trigger.type === 'scheduled' ? trigger.cron!.trim() : null,
      timezone: trigger.type === 'scheduled' ? (trigger.timezone ?? 'UTC') : null,
      allowActionOverride: trigger.type === 'webhook' ? (trigger.allowActionOverride ?? false) : false,
      webhookSchema:
        trigger.type === 'webhook'
          ? (trigger.schema ?? []).map((f) => ({
              name: f.name,
              type: f.type,
              description: f.description,
              required: f.required ?? false,
            }))
          : null,
    };
  }

  private newSecret(): { secret: string; hash: string } {
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    return { secret, hash: hashSecret(secret) };
  }

  async create(scope: Scope, dto: CreateAgentDto): Promise<AgentResponse> {
    requireRole(scope, 'member', 'Creating an agent');
    await this.assertSites(scope, dto.siteIds);
    const id = randomUUID();
    const policy = {
      approvalScopes: null,
      approvalTimeoutSeconds: null,
      notifyUrl: null,
      notifyEvents: null,
      notifySecret: null,
    };
    const notifySecret = this.policies.apply(id, policy, dto);
    let secret: string | undefined;
    const agent = await this.agents.createLocked(limitsUser(scope).id, scope, async ({ owner, count, save }) => {
      const trigger = this.checkTrigger(owner, dto.trigger);
      requireBelow(owner, await count(), (l) => l.agents, 'AGENT_LIMIT_REACHED', 'agents');
      let webhookSecretHash: string | null = null;
      if (trigger.triggerType === 'webhook') {
        const generated = this.newSecret();
        secret = generated.secret;
        webhookSecretHash = generated.hash;
      }
      const saved = await save({
        id,
        ...policy,
        userId: scope.user.id,
        workspaceId: scope.workspace?.id ?? null,
        name: dto.name,
        systemPrompt: dto.systemPrompt,
        siteIds: dto.siteIds,
        model: dto.model ?? null,
        ...trigger,
        webhookSecretHash,
      });
      if (saved.triggerType === 'scheduled') {
        // Inside the transaction: if Temporal refuses the schedule, the agent is not created either.
        await this.schedules.upsert(saved.id, saved.name, saved.cron!, saved.timezone);
      }
      return saved;
    });
    if (agent.triggerType === 'scheduled') {
      await this.schedules.startQueue(agent);
    }
    return this.toResponse(agent, secret, notifySecret);
  }

  async update(scope: Scope, agent: AgentEntity, dto: UpdateAgentDto): Promise<AgentResponse> {
    requireRole(scope, 'admin', 'Changing an agent');
    if (dto.siteIds !== undefined) {
      await this.assertSites(scope, dto.siteIds);
    }
    const before: TriggerType = agent.triggerType;
    const notifySecret = this.policies.apply(agent.id, agent, dto);
    let secret: string | undefined;
    if (dto.trigger !== undefined) {
      Object.assign(agent, this.checkTrigger(limitsUser(scope), dto.trigger));
      if (agent.triggerType === 'webhook' && before !== 'webhook') {
        const generated = this.newSecret();
        secret = generated.secret;
        agent.webhookSecretHash = generated.hash;
      }
      if (agent.triggerType !== 'webhook') {
        agent.webhookSecretHash = null;
      }
    }
    for (const key of ['name', 'systemPrompt', 'siteIds', 'model'] as const) {
      if (dto[key] !== undefined) {
        (agent as unknown as Record<string, unknown>)[key] = dto[key];
      }
    }
    await this.agents.saveAnd(agent, async () => {
      if (agent.triggerType === 'scheduled') {
        await this.schedules.upsert(agent.id, agent.name, agent.cron!, agent.timezone);
      } else if (before === 'scheduled') {
        await this.schedules.remove(agent.id);
      }
    });
    if (agent.triggerType === 'scheduled' && before !== 'scheduled') {
      await this.schedules.startQueue(agent);
    }
    return this.toResponse(agent, secret, notifySecret);
  }

  async rotateSecret(agent: AgentEntity): Promise<{ webhookSecret: string }> {
    if (agent.triggerType !== 'webhook') {
      throw AppError.validation([{ field: 'trigger.type', message: 'only webhook agents have a secret' }]);
    }
    const generated = this.newSecret();
    await this.agents.setSecretHash(agent.id, generated.hash);
    return { webhookSecret: generated.secret };
  }

  /** A new notify signing secret (shown this once); the old one stops signing at once. */
  async rotateNotifySecret(agent: AgentEntity): Promise<{ notifySecret: string }> {
    const { secret, sealed } = this.policies.rotate(agent);
    await this.agents.setNotifySecret(agent.id, sealed);
    return { notifySecret: secret };
  }

  async remove(agent: AgentEntity): Promise<void> {
    await this.schedules.remove(agent.id);
    await this.agents.delete(agent.id);
    this.logger.log(`agent ${agent.id} deleted`);
  }
}
