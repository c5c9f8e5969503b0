import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, IsNull, type DataSource } from 'typeorm';
import { AppError, type FieldProblem } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CreditsService, creditsFor } from '../credits/credits.service.js';
import { type ModelAnswer, ModelClient, type ModelStreamEvent } from '../model/model-client.js';
import { buildRunTools } from '../runs/run-tools.js';
import { scopesFor, type SiteScope, SITE_SCOPES } from '../sites/scopes.js';
import { ToolCaller } from '../tools/tool-caller.js';
import { CredentialEntity } from '../vault/credential.entity.js';
import { SiteEntity } from '../vault/site.entity.js';
import {
  modelToolsOf,
  type ModelContentBlock,
  type ModelMessage,
  type RunTool,
  type ToolResultBlock,
} from '../../workflows/contracts.js';
import { limitsOf } from '../billing/tiers.js';
import type { SubscriptionStatus, Tier } from '../users/user.entity.js';
import type { WorkspaceRole } from '../workspaces/workspace.entities.js';
import { inOwnersVaultSql, requireRole, roleAtLeast, type Scope } from '../workspaces/scope.js';
import { ChatMessageEntity, ChatSessionEntity, type SessionSite, type ToolCallRecord } from './chat.entities.js';
import { RowMapper } from '../common/database/row-mapper.js';
import { AuthenticatedPrefetch } from '../auth/prefetch.js';

/** Session tokens: recognisable prefix, 256 random bits. */
export const SESSION_TOKEN = /^ses_[A-Za-z0-9_-]{43}$/;
/** Model turns one chat message may take (tool use loops) before the reply is cut. */
export const MAX_CHAT_MODEL_TURNS = 10;

export interface SessionSiteResponse {
  siteId: string;
  name: string;
  tools: string[];
  /** The least scopes the chosen tools need. */
  scopes: SiteScope[];
  /** OAuth sites connected with fewer scopes than needed: what is missing and where to reconnect. */
  missingScopes?: SiteScope[];
  connectPath?: string;
}

export interface SessionResponse {
  id: string;
  title: string | null;
  sites: SessionSiteResponse[];
  scopes: SiteScope[];
  expiresAt: string;
  createdAt: string;
}

export interface MessageResponse {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  toolCalls?: ToolCallRecord[];
  usage?: { inputTokens: number; outputTokens: number; credits: number };
  createdAt: string;
}

/** Where a turn's events go as they happen (the SSE stream, or nowhere for a JSON answer). */
export interface TurnSink {
  text(delta: string): void;
  toolCall(call: { id: string; site: string; tool: string; input: unknown }): void;
  toolResult(result: { id: string; ok: boolean; result?: unknown; error?: string }): void;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The hash a session is stored under; INVALID_SESSION for a token that is not one. */
function hashedSessionToken(token: string): string {
  if (!SESSION_TOKEN.test(token)) {
    throw new AppError('INVALID_SESSION', 'The session token is malformed');
  }
  return hashToken(token);
}

/** SESSION_NOT_FOUND (unknown, or another user's), SESSION_EXPIRED; else the session. */
function liveSession(session: ChatSessionEntity | null): ChatSessionEntity {
  if (session === null) {
    throw new AppError('SESSION_NOT_FOUND', 'No session for this token');
  }
  if (session.expiresAt.getTime() <= Date.now()) {
    throw new AppError('SESSION_EXPIRED', 'The session has expired; create a new one');
  }
  return session;
}

/**
 * SQL: the session's workspace membership as it is now (the caller's role, the owner's plan), read in
 * the same query as the session: `member_role` is null when the user is no longer a member.
 */
const MEMBERSHIP_COLUMNS = 'wm.role AS member_role, o.tier AS owner_tier, o.subscription_status AS owner_status';
const MEMBERSHIP_JOINS =
  'LEFT JOIN workspace_members wm ON wm.workspace_id = cs.workspace_id AND wm.user_id = cs.user_id ' +
  'LEFT JOIN workspaces w ON w.id = cs.workspace_id LEFT JOIN users o ON o.id = w.owner_id';

/**
 * A workspace session is used with the workspace's credentials, so every use re-checks what creating
 * it checked: the user is still a member (PERMISSION_DENIED once removed: the session exists and is
 * theirs, but the workspace no longer lets them in), the role still allows the use (`minimum`:
 * `member` to chat, as for creating a session; any role to read or delete it), and the owner is
 * still on Team (WORKSPACE_REQUIRED, as X-Workspace-Id answers).
 */
function requireSessionAccess(
  session: ChatSessionEntity,
  row: Record<string, unknown>,
  minimum: WorkspaceRole,
  action: string,
): void {
  if (session.workspaceId === null) {
    return;
  }
  const role = row.member_role as WorkspaceRole | null;
  if (role === null) {
    throw new AppError('PERMISSION_DENIED', "You are no longer a member of this session's workspace");
  }
  const owner = { tier: row.owner_tier as Tier, subscriptionStatus: row.owner_status as SubscriptionStatus };
  if (limitsOf(owner).workspaces === 0) {
    throw new AppError('WORKSPACE_REQUIRED', "This workspace's owner is no longer on the Team plan");
  }
  if (!roleAtLeast(role, minimum)) {
    throw new AppError('PERMISSION_DENIED', `${action} needs the ${minimum} role in this workspace (you are ${role})`);
  }
}

/** Where a chat turn's context, read ahead during authentication, waits for the route (see openTurn). */
export const TURN_PREFETCH = Symbol('turnPrefetch');

export interface TurnPrefetch {
  userId: string;
  token: string;
  context: Promise<TurnContext>;
}

// Case-insensitive like Express's routing, so /API/SESSIONS/x/messages is read ahead too (only a
// speed-up: the route itself checks the token's user and session).
const TURN_PATH = /^\/api\/sessions\/([^/?#]+)\/messages\/?(?:\?.*)?$/i;

/** A session ready for a turn: the session, its sites (in its order) and its messages so far. */
export interface TurnContext {
  session: ChatSessionEntity;
  sites: SiteEntity[];
  history: ChatMessageEntity[];
}

@Injectable()
export class ChatService implements OnModuleInit {
  private readonly logger = new Logger('Chat');

  private readonly sessionRows: RowMapper<ChatSessionEntity>;
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly messageRows: RowMapper<ChatMessageEntity>;
  private readonly sessionQuery: string;
  private readonly findQuery: string;
  private readonly historyQuery: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly model: ModelClient,
    private readonly tools: ToolCaller,
    private readonly credits: CreditsService,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly prefetch: AuthenticatedPrefetch,
  ) {
    this.sessionRows = new RowMapper(dataSource, ChatSessionEntity, 'cs');
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.messageRows = new RowMapper(dataSource, ChatMessageEntity, 'm');
    // The session with its chosen sites (from the vault it belongs to: its workspace's, or its user's).
    // ... and the user's membership of its workspace as it is now (re-checked on every turn).
    this.sessionQuery =
      `SELECT ${this.sessionRows.select()}, ${this.siteRows.select()}, ${MEMBERSHIP_COLUMNS} FROM chat_sessions cs ` +
      `${MEMBERSHIP_JOINS} ` +
      "LEFT JOIN sites s ON s.id::text IN (SELECT e->>'siteId' FROM jsonb_array_elements(cs.sites) e) " +
      `AND ${inOwnersVaultSql('s', 'cs')} WHERE cs.token_hash = $1 AND cs.user_id = $2`;
    this.findQuery =
      `SELECT ${this.sessionRows.select()}, ${MEMBERSHIP_COLUMNS} FROM chat_sessions cs ${MEMBERSHIP_JOINS} ` +
      'WHERE cs.token_hash = $1 AND cs.user_id = $2';
    this.historyQuery =
      `SELECT ${this.messageRows.select()} FROM chat_messages m JOIN chat_sessions cs ON cs.id = m.session_id ` +
      'WHERE cs.token_hash = $1 AND cs.user_id = $2 ORDER BY m.seq ASC';
  }

  /** The chosen sites, from the vault the session belongs to (its workspace's, or its user's). */
  private async sitesOf(
    owner: { userId: string; workspaceId: string | null },
    chosen: SessionSite[],
  ): Promise<SiteEntity[]> {
    const ids = chosen.map((s) => s.siteId);
    const where =
      owner.workspaceId !== null ? { workspaceId: owner.workspaceId } : { userId: owner.userId, workspaceId: IsNull() };
    const found = ids.length ? await this.dataSource.getRepository(SiteEntity).findBy({ id: In(ids), ...where }) : [];
    return chosen.map((s) => found.find((f) => f.id === s.siteId)).filter((s): s is SiteEntity => s !== undefined);
  }

  async create(
    scope: Scope,
    input: { sites: Array<{ siteId: string; tools?: string[] }>; title?: string },
  ): Promise<SessionResponse & { token: string }> {
    requireRole(scope, 'member', 'Chatting');
    const userId = scope.user.id;
    const workspaceId = scope.workspace?.id ?? null;
    const chosen: SessionSite[] = input.sites.map((s) => ({ siteId: s.siteId, tools: s.tools ?? null }));
    const sites = await this.sitesOf({ userId, workspaceId }, chosen);
    const problems: FieldProblem[] = [];
    chosen.forEach((c, i) => {
      const site = sites.find((s) => s.id === c.siteId);
      if (site === undefined) {
        problems.push({ field: `sites[${i}].siteId`, message: 'is not a site in your vault' });
      } else {
        for (const tool of c.tools ?? []) {
          if (!site.manifest.tools.some((t) => t.name === tool)) {
            problems.push({ field: `sites[${i}].tools`, message: `the site has no tool "${tool}"` });
          }
        }
      }
      if (chosen.findIndex((o) => o.siteId === c.siteId) !== i) {
        problems.push({ field: `sites[${i}].siteId`, message: 'lists a site twice' });
      }
    });
    if (problems.length > 0) {
      throw AppError.validation(problems);
    }
    const token = `ses_${randomBytes(32).toString('base64url')}`;
    const session = await this.dataSource.getRepository(ChatSessionEntity).save({
      userId,
      workspaceId,
      tokenHash: hashToken(token),
      title: input.title ?? null,
      sites: chosen,
      expiresAt: new Date(Date.now() + this.settings.sessionTtlSeconds * 1000),
    });
    return { ...(await this.describeSession(session)), token };
  }

  /**
   * INVALID_SESSION (malformed), SESSION_NOT_FOUND (unknown, or another user's), SESSION_EXPIRED;
   * for a workspace session, PERMISSION_DENIED / WORKSPACE_REQUIRED once membership no longer allows
   * reading it (any role may read or delete their own session; see requireSessionAccess).
   */
  async findByToken(userId: string, token: string): Promise<ChatSessionEntity> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(this.findQuery, [
      hashedSessionToken(token),
      userId,
    ]);
    const session = liveSession(rows[0] === undefined ? null : this.sessionRows.from(rows[0]));
    requireSessionAccess(session, rows[0]!, 'viewer', 'Reading or deleting a session');
    return session;
  }

  /** A turn's session and messages are read while authentication finishes (saves a round trip's wait). */
  onModuleInit(): void {
    this.prefetch.register((req, userId) => {
      const match = req.method === 'POST' ? TURN_PATH.exec(req.originalUrl) : null;
      if (match === null) {
        return;
      }
      let token: string;
      try {
        token = decodeURIComponent(match[1]!);
      } catch {
        return;
      }
      const context = this.openTurn(userId, token);
      context.catch(() => undefined); // the route awaits it, and answers its error, once the guards pass
      (req as unknown as Record<symbol, TurnPrefetch>)[TURN_PREFETCH] = { userId, token, context };
    });
  }

  /**
   * What a turn needs before the model can be called, in one round trip's wait: the session with its
   * sites and the user's current membership of its workspace, and its messages so far (both keyed by
   * the token, so they are read side by side). The same codes as findByToken, and chatting needs the
   * member role in the session's workspace, checked on every turn.
   */
  async openTurn(userId: string, token: string): Promise<TurnContext> {
    const hash = hashedSessionToken(token);
    const [sessionRows, historyRows] = (await Promise.all([
      this.dataSource.query(this.sessionQuery, [hash, userId]),
      this.dataSource.query(this.historyQuery, [hash, userId]),
    ])) as [Array<Record<string, unknown>>, Array<Record<string, unknown>>];
    const session = liveSession(sessionRows[0] === undefined ? null : this.sessionRows.from(sessionRows[0]));
    requireSessionAccess(session, sessionRows[0]!, 'member', 'Chatting');
    const found = sessionRows.map((row) => this.siteRows.from(row)).filter((site) => site !== null);
    return {
      session,
      sites: session.sites
        .map((chosen) => found.find((site) => site.id === chosen.siteId))
        .filter((site) => site !== undefined),
      history: historyRows.map((row) => this.messageRows.from(row)!),
    };
  }

  async describeSession(session: ChatSessionEntity): Promise<SessionResponse> {
    const sites = await this.sitesOf(session, session.sites);
    const credentials = sites.length
      ? await this.dataSource.getRepository(CredentialEntity).findBy({ siteId: In(sites.map((s) => s.id)) })
      : [];
    const described: SessionSiteResponse[] = sites.map((site) => {
      const chosen = session.sites.find((s) => s.siteId === site.id)?.tools ?? null;
      const tools = site.manifest.tools.filter((t) => chosen === null || chosen.includes(t.name));
      const scopes = scopesFor(tools);
      const credential = credentials.find((c) => c.siteId === site.id);
      const entry: SessionSiteResponse = {
        siteId: site.id,
        name: site.manifest.name,
        tools: tools.map((t) => t.name),
        scopes,
      };
      if (site.manifest.auth.type === 'oauth2' && credential?.kind === 'oauth2') {
        const granted = new Set(credential.scopes ?? []);
        const missing = scopes.filter((s) => !granted.has(s));
        if (missing.length > 0 || credential.status === 'reauth_required') {
          entry.missingScopes = missing;
          entry.connectPath = `/api/vault/sites/${site.id}/oauth/start`;
        }
      }
      return entry;
    });
    const all = new Set(described.flatMap((s) => s.scopes));
    return {
      id: session.id,
      title: session.title,
      sites: described,
      scopes: SITE_SCOPES.filter((s) => all.has(s)),
      expiresAt: session.expiresAt.toISOString(),
      createdAt: session.createdAt.toISOString(),
    };
  }

  async messages(session: ChatSessionEntity): Promise<MessageResponse[]> {
    const rows = await this.dataSource
      .getRepository(ChatMessageEntity)
      .createQueryBuilder('m')
      .where('m.session_id = :id', { id: session.id })
      .orderBy('m.seq', 'ASC')
      .getMany();
    return rows.map(toMessageResponse);
  }

  async remove(session: ChatSessionEntity): Promise<void> {
    await this.dataSource.getRepository(ChatSessionEntity).delete({ id: session.id });
  }

  /**
   * One chat turn: the conversation so far and the new message go to the model with the session's
   * tools; tool calls go through the ToolCaller; the loop goes on until the model stops. Nothing is
   * saved unless the turn completes (an aborted or timed-out turn leaves no partial reply).
   */
  async turn(
    { session, sites, history }: TurnContext,
    content: string,
    sink: TurnSink | undefined,
    signal: AbortSignal,
    /** The user's balance as read for this request (by authentication). */
    balance: number,
  ): Promise<MessageResponse> {
    if (balance <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const tools = buildRunTools(sites, (site, tool) => {
      const chosen = session.sites.find((s) => s.siteId === site.id)?.tools ?? null;
      return chosen === null || chosen.includes(tool);
    });
    const messages: ModelMessage[] = [];
    for (const row of history) {
      if (row.role === 'user') {
        messages.push({ role: 'user', content: row.content });
      } else {
        messages.push(...(row.modelMessages ?? [{ role: 'assistant', content: row.content }]));
      }
    }
    const turnMessages: ModelMessage[] = [];
    messages.push({ role: 'user', content });
    const usage = { inputTokens: 0, outputTokens: 0, credits: 0 };
    const toolCalls: ToolCallRecord[] = [];
    const replyId = randomUUID();
    let text = '';
    for (let turn = 1; turn <= MAX_CHAT_MODEL_TURNS; turn += 1) {
      const answer = await this.modelTurn(tools, messages, sink, signal);
      const charge = await this.credits.charge(
        session.userId,
        creditsFor(answer.usage),
        'chat_turn',
        `chat:${replyId}:${turn}`,
      );
      usage.inputTokens += answer.usage.inputTokens;
      usage.outputTokens += answer.usage.outputTokens;
      usage.credits += charge.charged;
      const assistant: ModelMessage = { role: 'assistant', content: answer.content };
      messages.push(assistant);
      turnMessages.push(assistant);
      text += answer.text;
      const uses = answer.content.filter(
        (b): b is Extract<ModelContentBlock, { type: 'tool_use' }> => b.type === 'tool_use',
      );
      if (answer.stopReason !== 'tool_use' || uses.length === 0) {
        break;
      }
      const results: ToolResultBlock[] = [];
      for (const use of uses) {
        results.push(await this.callTool(tools, use, sink, signal, toolCalls));
      }
      const toolMessage: ModelMessage = { role: 'user', content: results };
      messages.push(toolMessage);
      turnMessages.push(toolMessage);
    }
    signal.throwIfAborted();
    const saved = await this.dataSource.transaction(async (em) => {
      const repo = em.getRepository(ChatMessageEntity);
      await repo.save({
        sessionId: session.id,
        role: 'user',
        content,
        toolCalls: null,
        modelMessages: null,
        usage: null,
      });
      return repo.save({
        id: replyId,
        sessionId: session.id,
        role: 'assistant',
        content: text,
        toolCalls,
        modelMessages: turnMessages,
        usage,
      });
    });
    return toMessageResponse(saved);
  }

  private async modelTurn(
    tools: RunTool[],
    messages: ModelMessage[],
    sink: TurnSink | undefined,
    signal: AbortSignal,
  ): Promise<ModelAnswer> {
    const request = {
      model: this.settings.defaultModel,
      system: 'You are the assistant of agentsite. Use the tools of the sites the user connected when they help.',
      messages,
      tools: modelToolsOf(tools),
    };
    if (sink === undefined) {
      return this.model.create(request, signal);
    }
    return this.model.stream(
      request,
      (event: ModelStreamEvent) => {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
          sink.text(event.delta.text);
        }
      },
      signal,
    );
  }

  private async callTool(
    tools: RunTool[],
    use: Extract<ModelContentBlock, { type: 'tool_use' }>,
    sink: TurnSink | undefined,
    signal: AbortSignal,
    records: ToolCallRecord[],
  ): Promise<ToolResultBlock> {
    const tool = tools.find((t) => t.name === use.name);
    sink?.toolCall({ id: use.id, site: tool?.siteName ?? 'unknown', tool: tool?.tool ?? use.name, input: use.input });
    let result: ToolResultBlock;
    const record: ToolCallRecord = {
      id: use.id,
      site: tool?.siteName ?? 'unknown',
      tool: tool?.tool ?? use.name,
      input: use.input,
      ok: false,
    };
    try {
      if (tool === undefined) {
        throw new AppError('NOT_FOUND', `No tool named ${use.name}`);
      }
      const site = await this.dataSource.getRepository(SiteEntity).findOneByOrFail({ id: tool.siteId });
      const called = await this.tools.call({ site, tool: tool.tool, input: use.input, signal });
      record.ok = true;
      record.result = called.result;
      result = { type: 'tool_result', tool_use_id: use.id, content: JSON.stringify(called.result) };
      sink?.toolResult({ id: use.id, ok: true, result: called.result });
    } catch (err) {
      signal.throwIfAborted();
      if (!(err instanceof AppError)) {
        throw err;
      }
      // A failed tool call is the model's to handle: it gets the error as the tool's result.
      record.error = `${err.code}: ${err.message}`;
      result = { type: 'tool_result', tool_use_id: use.id, content: record.error, is_error: true };
      sink?.toolResult({ id: use.id, ok: false, error: record.error });
    }
    records.push(record);
    return result;
  }
}

function toMessageResponse(row: ChatMessageEntity): MessageResponse {
  return {
    id: row.id,
    role: row.role,
    content: row.content,
    ...(row.role === 'assistant' ? { toolCalls: row.toolCalls ?? [], usage: row.usage ?? undefined } : {}),
    createdAt: row.createdAt.toISOString(),
  };
}
