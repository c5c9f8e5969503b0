import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { limitsOf } from '../billing/tiers.js';
import { AppError, type FieldProblem } from '../common/app-error.js';
import { type Page, type PageQuery, pageOf } from '../common/pagination.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { missingMcpScopes, scopesFor, SITE_SCOPES } from '../sites/scopes.js';
import type { WorkspaceRole } from '../workspaces/workspace.entities.js';
import { requireRole, roleAtLeast, type Scope } from '../workspaces/scope.js';
import {
  type MessageResponse,
  type SessionResponse,
  type SessionSiteResponse,
  type SessionSummaryResponse,
  toMessageResponse,
  type TurnContext,
} from './chat-responses.js';
import type { ChatSessionEntity, SessionSite } from './chat.entities.js';
import { ChatRepository, type FoundSession, type SessionKey, type SessionMembership } from './chat.repository.js';
import { type CachedContext, type SavedMessages, TurnContextCache } from './turn-context-cache.js';

/** Session tokens: recognisable prefix, 256 random bits. */
export const SESSION_TOKEN = /^ses_[A-Za-z0-9_-]{43}$/;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const SESSION_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** What a session route's `{token}` may be (declared in the OpenAPI document): anything else is INVALID_SESSION. */
export const SESSION_TOKEN_OR_ID = new RegExp(
  `^(?:${SESSION_TOKEN.source.slice(1, -1)}|${SESSION_ID.source.slice(1, -1)})$`,
);

/**
 * The session a path names: by its token (looked up by hash), or by its id, which GET /sessions
 * lists because only the tokens' hashes are kept. The id is no weaker a key: every lookup is also
 * by the caller's user id, so either names only the caller's own session. INVALID_SESSION otherwise.
 */
function sessionKey(tokenOrId: string): SessionKey {
  if (SESSION_TOKEN.test(tokenOrId)) {
    return { column: 'token_hash', value: hashToken(tokenOrId) };
  }
  if (SESSION_ID.test(tokenOrId)) {
    return { column: 'id', value: tokenOrId.toLowerCase() };
  }
  throw new AppError('INVALID_SESSION', 'The session token is malformed');
}

/** The turn context cache's key of a user's session. */
function cacheKey(userId: string, key: SessionKey): string {
  return `${userId} ${key.column} ${key.value}`;
}

/** cacheKey of a path's token; undefined for a malformed one (its turn answers INVALID_SESSION). */
function keyOf(userId: string, token: string): string | undefined {
  return SESSION_TOKEN.test(token) || SESSION_ID.test(token) ? cacheKey(userId, sessionKey(token)) : undefined;
}

/** SESSION_NOT_FOUND (unknown, or another user's), SESSION_EXPIRED; else the session found. */
function liveSession(found: FoundSession | null): FoundSession {
  if (found === null) {
    throw new AppError('SESSION_NOT_FOUND', 'No session for this token');
  }
  if (found.session.expiresAt.getTime() <= Date.now()) {
    throw new AppError('SESSION_EXPIRED', 'The session has expired; create a new one');
  }
  return found;
}

/**
 * A workspace session is used with the workspace's credentials, so every use re-checks what creating
 * it checked: the user is still a member (PERMISSION_DENIED once removed: the session exists and is
 * theirs, but the workspace no longer lets them in), the role still allows the use (`minimum`:
 * `member` to chat, as for creating a session; any role to read or delete it), and the owner is
 * still on Team (WORKSPACE_REQUIRED, as X-Workspace-Id answers).
 */
function requireSessionAccess(
  session: ChatSessionEntity,
  { role, owner }: SessionMembership,
  minimum: WorkspaceRole,
  action: string,
): void {
  if (session.workspaceId === null) {
    return;
  }
  if (role === null) {
    throw new AppError('PERMISSION_DENIED', "You are no longer a member of this session's workspace");
  }
  if (limitsOf(owner).workspaces === 0) {
    throw new AppError('WORKSPACE_REQUIRED', "This workspace's owner is no longer on the Team plan");
  }
  if (!roleAtLeast(role, minimum)) {
    throw new AppError('PERMISSION_DENIED', `${action} needs the ${minimum} role in this workspace (you are ${role})`);
  }
}

/** Chat sessions: creating, reading and deleting them, and opening one for a turn (access re-checked). */
@Injectable()
export class ChatSessionsService {
  constructor(
    private readonly chats: ChatRepository,
    private readonly contexts: TurnContextCache,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async create(
    scope: Scope,
    input: { sites: Array<{ siteId: string; tools?: string[] }>; title?: string },
  ): Promise<SessionResponse & { token: string }> {
    requireRole(scope, 'member', 'Chatting');
    const userId = scope.user.id;
    const workspaceId = scope.workspace?.id ?? null;
    const chosen: SessionSite[] = input.sites.map((s) => ({ siteId: s.siteId, tools: s.tools ?? null }));
    const sites = await this.chats.sitesOf({ userId, workspaceId }, chosen);
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
    const session = await this.chats.createSession({
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
   * GET /sessions: a page of the caller's own live sessions in the scope the request names, as
   * POST /sessions scopes a new one (X-Workspace-Id's workspace, or personal ones without it), newest
   * first; never another member's. Any workspace role may list, as any may read their own session.
   */
  async list(scope: Scope, query: PageQuery): Promise<Page<SessionSummaryResponse>> {
    const owner = { userId: scope.user.id, workspaceId: scope.workspace?.id ?? null };
    const rows = await this.chats.listLive(owner, query);
    return pageOf(
      rows.map((row) => ({ ...row, id: row.session.id, createdAt: row.session.createdAt })),
      query.limit,
      ({ session, messageCount, lastMessageAt }) => ({
        id: session.id,
        title: session.title,
        sites: session.sites.map((s) => ({ siteId: s.siteId, tools: s.tools })),
        messageCount,
        lastMessageAt: lastMessageAt === null ? null : new Date(lastMessageAt).toISOString(),
        expiresAt: session.expiresAt.toISOString(),
        createdAt: session.createdAt.toISOString(),
      }),
    );
  }

  /**
   * INVALID_SESSION (malformed), SESSION_NOT_FOUND (unknown, or another user's), SESSION_EXPIRED;
   * for a workspace session, PERMISSION_DENIED / WORKSPACE_REQUIRED once membership no longer allows
   * reading it (any role may read or delete their own session; see requireSessionAccess).
   */
  async findByToken(userId: string, token: string): Promise<ChatSessionEntity> {
    const { session, membership } = liveSession(await this.chats.findByKey(sessionKey(token), userId));
    requireSessionAccess(session, membership, 'viewer', 'Reading or deleting a session');
    return session;
  }

  /** GET /sessions/:token: the session with its messages. */
  async describeByToken(userId: string, token: string): Promise<SessionResponse & { messages: MessageResponse[] }> {
    const session = await this.findByToken(userId, token);
    return { ...(await this.describeSession(session)), messages: await this.messages(session) };
  }

  async removeByToken(userId: string, token: string): Promise<void> {
    const session = await this.findByToken(userId, token);
    await this.chats.removeSession(session.id);
  }

  /**
   * What a turn needs before the model can be called, in one round trip's wait: the session with its
   * sites and the user's current membership of its workspace, and its messages so far (both keyed by
   * the token, so they are read side by side). The same codes as findByToken, and chatting needs the
   * member role in the session's workspace, checked on every turn.
   */
  async openTurn(userId: string, token: string): Promise<TurnContext> {
    const key = sessionKey(token);
    const rows = await this.chats.turnRows(key, userId);
    const { session, membership } = liveSession(rows.found);
    requireSessionAccess(session, membership, 'member', 'Chatting');
    const context = {
      session,
      sites: session.sites
        .map((chosen) => rows.sites.find((site) => site.id === chosen.siteId))
        .filter((site) => site !== undefined),
      history: rows.history,
    };
    if (rows.version !== undefined) {
      this.contexts.put(cacheKey(userId, key), context, rows.version);
    }
    return context;
  }

  /**
   * The turn context of the user's session kept from its last turn in this process, with the version
   * the next turn must find unchanged before it uses it; undefined when none is kept.
   */
  cachedTurn(userId: string, token: string): CachedContext | undefined {
    const key = keyOf(userId, token);
    return key === undefined ? undefined : this.contexts.get(key);
  }

  hasCachedTurn(userId: string, token: string): boolean {
    const key = keyOf(userId, token);
    return key !== undefined && this.contexts.has(key);
  }

  /** A turn's messages saved: the kept context has them too (or is dropped, see TurnContextCache.saved). */
  turnSaved(userId: string, token: string, saved: SavedMessages): void {
    const key = keyOf(userId, token);
    if (key !== undefined) {
      this.contexts.saved(key, saved);
    }
  }

  /** The kept context is out of date (its version check failed). */
  forgetTurn(userId: string, token: string): void {
    const key = keyOf(userId, token);
    if (key !== undefined) {
      this.contexts.drop(key);
    }
  }

  async describeSession(session: ChatSessionEntity): Promise<SessionResponse> {
    const sites = await this.chats.sitesOf(session, session.sites);
    const credentials = await this.chats.credentialsOf(sites.map((s) => s.id));
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
        const granted: string[] = credential.scopes ?? [];
        // An MCP server's scopes are its own: what lacks is known where they are named after ours, and
        // a step-up it asked for (403 insufficient_scope) needs connecting again.
        const mcp = site.protocol === 'mcp';
        const missing = mcp
          ? missingMcpScopes(site.manifest.auth.scopes, tools, granted, credential.requiredScope)
          : scopes.filter((s) => !granted.includes(s));
        const stepUp = mcp && credential.requiredScope !== null;
        if (missing.length > 0 || stepUp || credential.status === 'reauth_required') {
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
    return (await this.chats.messages(session.id)).map(toMessageResponse);
  }
}
