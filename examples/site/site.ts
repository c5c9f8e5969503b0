/**
 * The reference tool site: a small notebook application that implements the site side of the
 * protocol. Site authors can copy it; agentsite's tests and `npm start`'s demo run it.
 *
 * - GET  /.well-known/agentsite.json      the manifest
 * - POST /api/tools/<name>                the tools (Authorization: Bearer <token>)
 * - GET  /oauth/authorize                 login and consent page (HTML form)
 * - POST /oauth/authorize                 the form's submission → 302 to redirect_uri?code&state
 * - POST /oauth/token                     authorization_code (PKCE S256) and refresh_token grants
 * - POST /oauth/revoke                    RFC 7009 revocation (a refresh token ends its whole grant)
 * - POST /api/tokens, GET /api/tokens, DELETE /api/tokens/<id>
 *                                          API tokens a user creates and revokes (HTTP Basic auth)
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ServerCert } from './tls.js';

export type Scope = 'read' | 'write' | 'delete' | 'admin';
export const SCOPES: Scope[] = ['read', 'write', 'delete', 'admin'];

export interface SiteUser {
  username: string;
  password: string;
  role: 'member' | 'admin';
}

export interface ReferenceSiteOptions {
  tls: ServerCert;
  port?: number;
  host?: string;
  /** Hostname used in the manifest's URLs (default localhost). */
  publicHost?: string;
  users?: SiteUser[];
  /** OAuth clients and their exact redirect URIs. */
  clients?: Record<string, string[]>;
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  /** Requests per minute per token and per client address (429 with Retry-After past them). */
  limitPerToken?: number;
  limitPerIp?: number;
}

export interface Note {
  id: string;
  title: string;
  body: string;
  owner: string;
  createdAt: string;
  updatedAt: string;
}

interface AccessToken {
  token: string;
  username: string;
  scopes: Scope[];
  expiresAt: number;
  kind: 'oauth' | 'api';
  id: string;
  familyId?: string;
  revoked: boolean;
}

interface RefreshToken {
  token: string;
  username: string;
  clientId: string;
  scopes: Scope[];
  familyId: string;
  expiresAt: number;
  used: boolean;
}

interface AuthCode {
  code: string;
  username: string;
  clientId: string;
  redirectUri: string;
  scopes: Scope[];
  codeChallenge: string;
  expiresAt: number;
  used: boolean;
}

/**
 * Deliberate protocol faults, one switch each: the conformance checker's tests turn one on and expect
 * exactly its rule to fail. All off by default (the site conforms).
 */
export interface SiteFaults {
  /** The manifest lacks `description` and has a tool name with a space. */
  invalidManifest?: boolean;
  /** A tool call without a token is answered 401 as plain text. */
  plainTextUnauthorized?: boolean;
  /** Tool calls require a field no input_schema declares (400 for the declared input). */
  refuseDeclaredInput?: boolean;
  /** Tool results are HTML. */
  htmlResults?: boolean;
  /** 429 answers carry no Retry-After. */
  rateLimitWithoutRetryAfter?: boolean;
  /** The authorization endpoint takes requests without PKCE. */
  pkceOptional?: boolean;
  /** The token endpoint does not check code_verifier. */
  pkceNotVerified?: boolean;
  /** redirect_uri is matched by prefix instead of exactly. */
  redirectUriPrefix?: boolean;
  /** The consent redirect carries a different state. */
  stateAltered?: boolean;
  /** The token answer has no token_type. */
  tokenWithoutType?: boolean;
  /** A refresh answers the same refresh token, which stays valid. */
  noRefreshRotation?: boolean;
}

/** A scripted answer for the next tool calls (tests and demos of failure handling). */
export interface InjectedFailure {
  tool?: string;
  status: number;
  retryAfterSeconds?: number;
  /** Raw body to send (default: a JSON `{error}`). */
  rawBody?: string;
  times?: number;
}

interface ToolDefinition {
  name: string;
  description: string;
  scope: Scope;
  adminOnly?: boolean;
  input_schema: {
    type: 'object';
    properties: Record<string, { type: string; description?: string; enum?: string[] }>;
    required: string[];
  };
  run(site: ReferenceSite, user: SiteUser, input: Record<string, unknown>): unknown;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const WINDOW_MS = 60_000;
const CODE_TTL_MS = 60_000;
const MAX_BODY_BYTES = 64 * 1024;

function sha256base64url(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const TOOLS: ToolDefinition[] = [
  {
    name: 'search_notes',
    description: 'Search notes by words in their title or body.',
    scope: 'read',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Words to look for' },
        limit: { type: 'integer', description: 'At most this many results (default 10)' },
      },
      required: ['query'],
    },
    run: (site, user, input) => {
      const words = String(input.query).toLowerCase().split(/\s+/).filter(Boolean);
      const limit = typeof input.limit === 'number' ? input.limit : 10;
      const results = site
        .notesOf(user.username)
        .filter((n) => words.every((w) => `${n.title} ${n.body}`.toLowerCase().includes(w)))
        .slice(0, limit);
      return { results };
    },
  },
  {
    name: 'list_notes',
    description: 'List all notes of the user, newest first.',
    scope: 'read',
    input_schema: { type: 'object', properties: {}, required: [] },
    run: (site, user) => ({ results: site.notesOf(user.username).reverse() }),
  },
  {
    name: 'get_note',
    description: 'Get one note by its id.',
    scope: 'read',
    input_schema: { type: 'object', properties: { id: { type: 'string', description: 'Note id' } }, required: ['id'] },
    run: (site, user, input) => site.noteOf(user.username, String(input.id)),
  },
  {
    name: 'create_note',
    description: 'Create a note.',
    scope: 'write',
    input_schema: {
      type: 'object',
      properties: {
        title: { type: 'string', description: 'Title of the note' },
        body: { type: 'string', description: 'Text of the note' },
      },
      required: ['title'],
    },
    run: (site, user, input) => site.createNote(user.username, String(input.title), String(input.body ?? '')),
  },
  {
    name: 'update_note',
    description: 'Change the title or body of a note.',
    scope: 'write',
    input_schema: {
      type: 'object',
      properties: { id: { type: 'string' }, title: { type: 'string' }, body: { type: 'string' } },
      required: ['id'],
    },
    run: (site, user, input) => {
      const note = site.noteOf(user.username, String(input.id));
      if (typeof input.title === 'string') {
        note.title = input.title;
      }
      if (typeof input.body === 'string') {
        note.body = input.body;
      }
      note.updatedAt = new Date().toISOString();
      site.stats.effects += 1;
      return note;
    },
  },
  {
    name: 'delete_note',
    description: 'Delete a note.',
    scope: 'delete',
    input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    run: (site, user, input) => {
      const note = site.noteOf(user.username, String(input.id));
      site.notes.delete(note.id);
      site.stats.effects += 1;
      return { deleted: note.id };
    },
  },
  {
    name: 'manage_users',
    description: 'List the users of the notebook (administrators only).',
    scope: 'admin',
    adminOnly: true,
    input_schema: {
      type: 'object',
      properties: { action: { type: 'string', enum: ['list'], description: 'What to do' } },
      required: ['action'],
    },
    run: (site) => ({ results: site.users.map((u) => ({ username: u.username, role: u.role })) }),
  },
];

/** A fixed-window counter per key (enough for an example; a production site would share it). */
class WindowLimiter {
  private readonly hits = new Map<string, { count: number; resetAt: number }>();

  constructor(public limit: number) {}

  /** Returns seconds to wait when over the limit, else undefined. */
  take(key: string, now = Date.now()): number | undefined {
    const entry = this.hits.get(key);
    if (entry === undefined || entry.resetAt <= now) {
      this.hits.set(key, { count: 1, resetAt: now + WINDOW_MS });
      return undefined;
    }
    entry.count += 1;
    return entry.count > this.limit ? Math.ceil((entry.resetAt - now) / 1000) : undefined;
  }
}

export class ReferenceSite {
  readonly users: SiteUser[];
  readonly notes = new Map<string, Note>();
  readonly stats = { toolCalls: 0, effects: 0, refreshes: 0, codeExchanges: 0, invalidGrants: 0, connections: 0 };
  /** Every request that reached the token endpoint: its grant type and code (to show what was redeemed). */
  readonly tokenRequests: Array<{ grantType: string | null; code: string | null }> = [];
  /** Every request that reached the site, in order: its method and path (to check what was sent at all). */
  readonly requestLog: Array<{ method: string; path: string }> = [];
  /** Headers of the last tool call (to check what the service sends). */
  lastToolRequest: { tool: string; headers: IncomingMessage['headers']; body: unknown } | undefined;
  readonly failures: InjectedFailure[] = [];
  /** Protocol faults switched on (conformance checker tests). */
  faults: SiteFaults = {};
  /** Replaces the manifest: an object, a raw string, an HTTP status, or a redirect target. */
  manifestOverride: { json?: unknown; raw?: string; status?: number; redirectTo?: string } | undefined;
  /** Delay before answering a tool call, in milliseconds. */
  toolDelayMs = 0;
  /** Delay before answering a token request (a stalling token endpoint), in milliseconds. */
  tokenDelayMs = 0;
  /**
   * A replayed (already rotated) refresh token revokes its whole grant, as OAuth 2.1 advises. Some
   * providers rotate without that (the replay alone fails): false plays one of those.
   */
  revokeFamilyOnReuse = true;
  /** Requests to the revocation endpoint: the hint each gave and whether the token was one of this site's. */
  readonly revocations: Array<{ hint: string | null; known: boolean; failed?: true }> = [];
  /** While true, the revocation endpoint answers 503 and revokes nothing. */
  failRevocations = false;
  /**
   * Whether the token endpoint issues refresh tokens. false plays a provider that grants only an access
   * token: the connection ends when it expires.
   */
  issueRefreshTokens = true;
  /** Token requests that have started waiting out tokenDelayMs. */
  stalledTokenRequests = 0;
  accessTokenTtlSeconds: number;

  private server: https.Server | undefined;
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, RefreshToken>();
  private readonly codes = new Map<string, AuthCode>();
  private readonly idempotent = new Map<string, { status: number; body: unknown }>();
  private readonly sockets = new Set<Socket>();
  private readonly perToken: WindowLimiter;
  private readonly perIp: WindowLimiter;
  private readonly clients: Record<string, string[]>;
  private readonly refreshTtlSeconds: number;
  private origin = '';

  constructor(private readonly options: ReferenceSiteOptions) {
    this.users = options.users ?? [
      { username: 'alice', password: 'alice-password', role: 'member' },
      { username: 'root', password: 'root-password', role: 'admin' },
    ];
    this.clients = options.clients ?? { agentsite: [] };
    this.accessTokenTtlSeconds = options.accessTokenTtlSeconds ?? 3600;
    this.refreshTtlSeconds = options.refreshTokenTtlSeconds ?? 30 * 86_400;
    this.perToken = new WindowLimiter(options.limitPerToken ?? 60);
    this.perIp = new WindowLimiter(options.limitPerIp ?? 200);
  }

  static async start(options: ReferenceSiteOptions): Promise<ReferenceSite> {
    const site = new ReferenceSite(options);
    await site.listen();
    return site;
  }

  get url(): string {
    return this.origin;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  /** Adds an OAuth redirect URI for a client (the service's callback). */
  allowRedirect(clientId: string, redirectUri: string): void {
    (this.clients[clientId] ??= []).push(redirectUri);
  }

  /** Issues an API token directly (what a user does on the site's settings page). */
  issueApiToken(username: string, scopes: Scope[] = SCOPES, expiresInSeconds = 30 * 86_400): AccessToken {
    const token: AccessToken = {
      token: `ref_${randomBytes(24).toString('base64url')}`,
      username,
      scopes,
      expiresAt: Date.now() + expiresInSeconds * 1000,
      kind: 'api',
      id: randomUUID(),
      revoked: false,
    };
    this.accessTokens.set(token.token, token);
    return token;
  }

  /** The access tokens issued through OAuth, oldest first (to see what a revocation did). */
  oauthAccessTokens(): AccessToken[] {
    return [...this.accessTokens.values()].filter((t) => t.kind === 'oauth');
  }

  /** Makes every current access token expired (to exercise refresh). */
  expireAccessTokens(): void {
    for (const token of this.accessTokens.values()) {
      token.expiresAt = Date.now() - 1000;
    }
  }

  /** Revokes every OAuth grant (what a user does with "disconnect all apps" on the site). */
  revokeAllGrants(): void {
    for (const token of this.refreshTokens.values()) {
      this.revokeFamily(token.familyId);
    }
  }

  /** Whether a refresh token has been used (rotated away) or revoked. */
  refreshTokenState(token: string): 'active' | 'used' | 'unknown' {
    const found = this.refreshTokens.get(token);
    return found === undefined ? 'unknown' : found.used ? 'used' : 'active';
  }

  notesOf(username: string): Note[] {
    return [...this.notes.values()].filter((n) => n.owner === username);
  }

  noteOf(username: string, id: string): Note {
    const note = this.notes.get(id);
    if (note === undefined || note.owner !== username) {
      throw new HttpError(404, `No note with id ${id}`);
    }
    return note;
  }

  createNote(username: string, title: string, body: string): Note {
    const now = new Date().toISOString();
    const note: Note = { id: randomUUID(), title, body, owner: username, createdAt: now, updatedAt: now };
    this.notes.set(note.id, note);
    this.stats.effects += 1;
    return note;
  }

  manifest(): Record<string, unknown> {
    return {
      name: 'Reference Notebook',
      version: '1.0.0',
      description: 'A notebook with notes to search, read, write and delete: the agentsite reference site.',
      server: { url: `${this.origin}/api` },
      auth: {
        type: 'oauth2',
        authorization_url: `${this.origin}/oauth/authorize`,
        token_url: `${this.origin}/oauth/token`,
        revocation_url: `${this.origin}/oauth/revoke`,
        scopes: SCOPES,
      },
      tools: TOOLS.map(({ name, description, input_schema }) => ({ name, description, input_schema })),
    };
  }

  private async listen(): Promise<void> {
    const server = https.createServer({ key: this.options.tls.key, cert: this.options.tls.cert }, (req, res) => {
      void this.handle(req, res);
    });
    server.on('secureConnection', (socket: Socket) => {
      this.stats.connections += 1;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) =>
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', resolve),
    );
    this.server = server;
    this.origin = `https://${this.options.publicHost ?? 'localhost'}:${this.port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    this.requestLog.push({ method: req.method ?? '', path: url.pathname });
    try {
      // The manifest of a site that lives under a path (https://host/app) is at /app/.well-known/….
      if (req.method === 'GET' && url.pathname.endsWith('/.well-known/agentsite.json')) {
        return this.serveManifest(res);
      }
      const tool = /^\/api\/tools\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'POST' && tool) {
        return await this.callTool(req, res, decodeURIComponent(tool[1]!));
      }
      if (url.pathname === '/oauth/authorize' && req.method === 'GET') {
        return this.authorizePage(res, url.searchParams);
      }
      if (url.pathname === '/oauth/authorize' && req.method === 'POST') {
        return this.authorizeSubmit(res, new URLSearchParams(await readBody(req)));
      }
      if (url.pathname === '/oauth/token' && req.method === 'POST') {
        const body = await readBody(req);
        if (this.tokenDelayMs > 0) {
          this.stalledTokenRequests += 1;
          await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs));
        }
        return this.token(res, req, body);
      }
      if (url.pathname === '/oauth/revoke' && req.method === 'POST') {
        return this.revoke(res, new URLSearchParams(await readBody(req)));
      }
      if (url.pathname === '/api/tokens' || url.pathname.startsWith('/api/tokens/')) {
        return await this.apiTokens(req, res, url.pathname);
      }
      throw new HttpError(404, `No route for ${req.method} ${url.pathname}`);
    } catch (err) {
      const error = err instanceof HttpError ? err : new HttpError(500, 'Internal error');
      if (error.headers['x-fault-plain'] !== undefined) {
        res.writeHead(error.status, { 'content-type': 'text/plain' }).end(error.message);
        return;
      }
      sendJson(res, error.status, { error: error.message }, error.headers);
    }
  }

  private serveManifest(res: ServerResponse): void {
    const override = this.manifestOverride;
    if (override?.redirectTo !== undefined) {
      res.writeHead(302, { location: override.redirectTo }).end();
      return;
    }
    if (override?.status !== undefined) {
      sendJson(res, override.status, { error: 'manifest unavailable' });
      return;
    }
    if (override?.raw !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(override.raw);
      return;
    }
    let manifest = override?.json ?? this.manifest();
    if (this.faults.invalidManifest) {
      const {
        description: _description,
        tools,
        ...rest
      } = manifest as { description: string; tools: Array<{ name: string }> };
      manifest = { ...rest, tools: tools.map((t, i) => (i === 0 ? { ...t, name: `${t.name} v2` } : t)) };
    }
    sendJson(res, 200, manifest);
  }

  /** Resolves the bearer token of a request: 401 when missing, unknown, expired or revoked. */
  private authenticate(req: IncomingMessage): { token: AccessToken; user: SiteUser } {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header);
    if (!match) {
      throw new HttpError(401, 'Missing bearer token', {
        'www-authenticate': 'Bearer',
        ...(this.faults.plainTextUnauthorized ? { 'x-fault-plain': 'true' } : {}),
      });
    }
    const token = this.accessTokens.get(match[1]!);
    if (token === undefined || token.revoked) {
      throw new HttpError(401, 'Invalid or revoked token', { 'www-authenticate': 'Bearer error="invalid_token"' });
    }
    if (token.expiresAt <= Date.now()) {
      throw new HttpError(401, 'Token expired', { 'www-authenticate': 'Bearer error="invalid_token"' });
    }
    const user = this.users.find((u) => u.username === token.username);
    if (user === undefined) {
      throw new HttpError(401, 'Token of an unknown user');
    }
    return { token, user };
  }

  private async callTool(req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
    const ip = req.socket.remoteAddress ?? 'unknown';
    const ipWait = this.perIp.take(ip);
    if (ipWait !== undefined) {
      throw new HttpError(429, 'Too many requests from this address', { 'retry-after': String(ipWait) });
    }
    const { token, user } = this.authenticate(req);
    const tokenWait = this.perToken.take(token.id);
    if (tokenWait !== undefined) {
      const headers: Record<string, string> = this.faults.rateLimitWithoutRetryAfter
        ? {}
        : { 'retry-after': String(tokenWait) };
      throw new HttpError(429, 'Too many requests for this token', headers);
    }
    const raw = await readBody(req);
    this.stats.toolCalls += 1;
    let input: unknown;
    try {
      input = raw === '' ? {} : JSON.parse(raw);
    } catch {
      throw new HttpError(400, 'Body is not valid JSON');
    }
    this.lastToolRequest = { tool: name, headers: req.headers, body: input };
    if (this.toolDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.toolDelayMs));
    }
    const failure = this.failures.find((f) => f.tool === undefined || f.tool === name);
    if (failure !== undefined) {
      failure.times = (failure.times ?? 1) - 1;
      if (failure.times <= 0) {
        this.failures.splice(this.failures.indexOf(failure), 1);
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (failure.retryAfterSeconds !== undefined) {
        headers['retry-after'] = String(failure.retryAfterSeconds);
      }
      res
        .writeHead(failure.status, headers)
        .end(failure.rawBody ?? JSON.stringify({ error: `Injected ${failure.status}` }));
      return;
    }
    const tool = TOOLS.find((t) => t.name === name);
    if (tool === undefined) {
      throw new HttpError(404, `No tool named ${name}`);
    }
    if (!token.scopes.includes(tool.scope)) {
      throw new HttpError(403, `This token lacks the "${tool.scope}" scope needed by ${name}`);
    }
    if (tool.adminOnly && user.role !== 'admin') {
      throw new HttpError(403, `${name} is for administrators of the notebook`);
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new HttpError(400, 'Body must be a JSON object');
    }
    const required = this.faults.refuseDeclaredInput
      ? [...tool.input_schema.required, 'workspace']
      : tool.input_schema.required;
    for (const field of required) {
      if (!(field in input)) {
        throw new HttpError(400, `Missing field "${field}"`);
      }
    }
    // Idempotency-Key: a retried request gets the first answer and causes no second effect.
    const key = req.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' && key !== '' ? `${user.username}:${key}` : undefined;
    if (idempotencyKey !== undefined) {
      const previous = this.idempotent.get(idempotencyKey);
      if (previous !== undefined) {
        sendJson(res, previous.status, previous.body, { 'idempotent-replayed': 'true' });
        return;
      }
    }
    const result = tool.run(this, user, input as Record<string, unknown>);
    if (idempotencyKey !== undefined) {
      this.idempotent.set(idempotencyKey, { status: 200, body: result });
    }
    if (this.faults.htmlResults) {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<pre>${escapeHtml(JSON.stringify(result))}</pre>`);
      return;
    }
    sendJson(res, 200, result);
  }

  private clientRedirectOk(clientId: string | null, redirectUri: string | null): boolean {
    if (clientId === null || redirectUri === null) {
      return false;
    }
    const registered = this.clients[clientId] ?? [];
    return this.faults.redirectUriPrefix
      ? registered.some((uri) => redirectUri.startsWith(uri))
      : registered.includes(redirectUri);
  }

  /** Checks an authorization request; errors before the redirect URI is trusted are shown, not redirected. */
  private checkAuthorizeRequest(params: URLSearchParams): { scopes: Scope[]; redirectUri: string } {
    const clientId = params.get('client_id');
    const redirectUri = params.get('redirect_uri');
    if (!this.clientRedirectOk(clientId, redirectUri)) {
      throw new HttpError(400, 'Unknown client_id or redirect_uri not registered for it (exact match required)');
    }
    if (params.get('response_type') !== 'code') {
      throw new HttpError(400, 'response_type must be code');
    }
    const pkceMissing = !params.has('code_challenge') && !params.has('code_challenge_method');
    if (
      !(this.faults.pkceOptional && pkceMissing) &&
      (params.get('code_challenge_method') !== 'S256' ||
        !/^[A-Za-z0-9_-]{43}$/.test(params.get('code_challenge') ?? ''))
    ) {
      throw new HttpError(400, 'PKCE is required: code_challenge with code_challenge_method=S256');
    }
    const scopes = (params.get('scope') ?? '').split(' ').filter(Boolean);
    if (scopes.length === 0 || scopes.some((s) => !SCOPES.includes(s as Scope))) {
      throw new HttpError(400, `scope must be a space-separated subset of: ${SCOPES.join(' ')}`);
    }
    return { scopes: scopes as Scope[], redirectUri: redirectUri! };
  }

  private authorizePage(res: ServerResponse, params: URLSearchParams): void {
    const { scopes } = this.checkAuthorizeRequest(params);
    const hidden = [...params.entries()]
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join('');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><title>Connect to Reference Notebook</title>
<h1>${escapeHtml(params.get('client_id') ?? '')} asks for access: ${scopes.map(escapeHtml).join(', ')}</h1>
<form method="post" action="/oauth/authorize">${hidden}
<label>User <input name="username"></label> <label>Password <input name="password" type="password"></label>
<button name="decision" value="approve">Approve</button> <button name="decision" value="deny">Deny</button></form>`,
    );
  }

  private authorizeSubmit(res: ServerResponse, form: URLSearchParams): void {
    const { scopes, redirectUri } = this.checkAuthorizeRequest(form);
    const target = new URL(redirectUri);
    const state = form.get('state');
    if (state !== null) {
      target.searchParams.set('state', this.faults.stateAltered ? state.slice(0, 16) : state); // returned unchanged
    }
    const user = this.users.find((u) => u.username === form.get('username'));
    if (user === undefined || !safeEqual(user.password, form.get('password') ?? '')) {
      throw new HttpError(401, 'Wrong username or password');
    }
    if (form.get('decision') !== 'approve') {
      target.searchParams.set('error', 'access_denied');
      res.writeHead(302, { location: target.toString() }).end();
      return;
    }
    const code: AuthCode = {
      code: randomBytes(24).toString('base64url'),
      username: user.username,
      clientId: form.get('client_id')!,
      redirectUri,
      scopes,
      codeChallenge: form.get('code_challenge')!,
      expiresAt: Date.now() + CODE_TTL_MS,
      used: false,
    };
    this.codes.set(code.code, code);
    target.searchParams.set('code', code.code);
    res.writeHead(302, { location: target.toString() }).end();
  }

  private token(res: ServerResponse, req: IncomingMessage, raw: string): void {
    const sent = new URLSearchParams(raw);
    this.tokenRequests.push({ grantType: sent.get('grant_type'), code: sent.get('code') });
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      throw new HttpError(400, 'Content-Type must be application/x-www-form-urlencoded');
    }
    const form = new URLSearchParams(raw);
    const fail = (error: string, description: string, status = 400): void => {
      if (error === 'invalid_grant') {
        this.stats.invalidGrants += 1;
      }
      sendJson(res, status, { error, error_description: description }, { 'cache-control': 'no-store' });
    };
    const clientId = form.get('client_id');
    if (clientId === null || !(clientId in this.clients)) {
      return fail('invalid_client', 'Unknown client_id', 401);
    }
    if (form.has('client_secret')) {
      return fail('invalid_client', 'Public clients must not send a client_secret', 401);
    }
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      if (code === undefined || code.used || code.expiresAt <= Date.now() || code.clientId !== clientId) {
        if (code !== undefined && code.used) {
          this.revokeFamilyOfCode(code);
        }
        return fail('invalid_grant', 'Authorization code is invalid, expired or already used');
      }
      code.used = true;
      if (form.get('redirect_uri') !== code.redirectUri) {
        return fail('invalid_grant', 'redirect_uri does not match the authorization request');
      }
      const verifier = form.get('code_verifier') ?? '';
      const pkceFails =
        !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !safeEqual(sha256base64url(verifier), code.codeChallenge);
      if (pkceFails && !this.faults.pkceNotVerified) {
        return fail('invalid_grant', 'PKCE verification failed');
      }
      this.stats.codeExchanges += 1;
      const familyId = randomUUID();
      (code as AuthCode & { familyId?: string }).familyId = familyId;
      return sendJson(res, 200, this.issuePair(code.username, clientId, code.scopes, familyId, true), {
        'cache-control': 'no-store',
      });
    }
    if (grant === 'refresh_token') {
      const presented = this.refreshTokens.get(form.get('refresh_token') ?? '');
      if (presented === undefined || presented.clientId !== clientId || presented.expiresAt <= Date.now()) {
        return fail('invalid_grant', 'Refresh token is invalid or expired');
      }
      if (presented.used) {
        // Reuse of a rotated refresh token: someone replayed it. Revoke the whole family.
        if (this.revokeFamilyOnReuse) {
          this.revokeFamily(presented.familyId);
        }
        return fail('invalid_grant', 'Refresh token was already used; the grant is revoked');
      }
      this.stats.refreshes += 1;
      const pair = this.issuePair(presented.username, clientId, presented.scopes, presented.familyId, false);
      if (this.faults.noRefreshRotation) {
        pair.refresh_token = presented.token;
      } else {
        presented.used = true;
      }
      return sendJson(res, 200, pair, { 'cache-control': 'no-store' });
    }
    return fail('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }

  private issuePair(
    username: string,
    clientId: string,
    scopes: Scope[],
    familyId: string,
    withScope: boolean,
  ): Record<string, unknown> {
    const access: AccessToken = {
      token: randomBytes(32).toString('base64url'),
      username,
      scopes,
      expiresAt: Date.now() + this.accessTokenTtlSeconds * 1000,
      kind: 'oauth',
      id: randomUUID(),
      familyId,
      revoked: false,
    };
    const refresh: RefreshToken = {
      token: randomBytes(32).toString('base64url'),
      username,
      clientId,
      scopes,
      familyId,
      expiresAt: Date.now() + this.refreshTtlSeconds * 1000,
      used: false,
    };
    this.accessTokens.set(access.token, access);
    if (this.issueRefreshTokens) {
      this.refreshTokens.set(refresh.token, refresh);
    }
    return {
      access_token: access.token,
      ...(this.faults.tokenWithoutType ? {} : { token_type: 'Bearer' }),
      expires_in: this.accessTokenTtlSeconds,
      ...(this.issueRefreshTokens ? { refresh_token: refresh.token } : {}),
      ...(withScope ? { scope: scopes.join(' ') } : {}),
    };
  }

  /**
   * RFC 7009: a refresh token ends its whole grant; an access token only itself. The answer is 200
   * whether or not the token was known (so a caller learns nothing of other clients' tokens).
   */
  private revoke(res: ServerResponse, form: URLSearchParams): void {
    const value = form.get('token') ?? '';
    const refresh = this.refreshTokens.get(value);
    const access = this.accessTokens.get(value);
    const clientId = form.get('client_id');
    if (this.failRevocations) {
      this.revocations.push({ hint: form.get('token_type_hint'), known: false, failed: true });
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"temporarily_unavailable"}');
      return;
    }
    const mine = refresh !== undefined && refresh.clientId === clientId;
    if (mine) {
      this.revokeFamily(refresh.familyId);
    } else if (access !== undefined && access.kind === 'oauth') {
      access.revoked = true;
    }
    this.revocations.push({ hint: form.get('token_type_hint'), known: mine || access !== undefined });
    res.writeHead(200, { 'cache-control': 'no-store' }).end();
  }

  private revokeFamily(familyId: string): void {
    for (const token of this.refreshTokens.values()) {
      if (token.familyId === familyId) {
        token.used = true;
      }
    }
    for (const token of this.accessTokens.values()) {
      if (token.familyId === familyId) {
        token.revoked = true;
      }
    }
  }

  private revokeFamilyOfCode(code: AuthCode): void {
    const familyId = (code as AuthCode & { familyId?: string }).familyId;
    if (familyId !== undefined) {
      this.revokeFamily(familyId);
    }
  }

  /** API tokens: create, list and revoke, authenticated with the user's password (HTTP Basic). */
  private async apiTokens(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const [username, password] = basic ? Buffer.from(basic[1]!, 'base64').toString().split(':') : [];
    const user = this.users.find((u) => u.username === username);
    if (user === undefined || !safeEqual(user.password, password ?? '')) {
      throw new HttpError(401, 'HTTP Basic authentication with the notebook password required', {
        'www-authenticate': 'Basic realm="notebook"',
      });
    }
    if (req.method === 'POST' && pathname === '/api/tokens') {
      const raw = await readBody(req);
      const body = (raw === '' ? {} : JSON.parse(raw)) as { scopes?: Scope[]; expiresInSeconds?: number };
      const scopes = body.scopes ?? ['read'];
      if (!Array.isArray(scopes) || scopes.some((s) => !SCOPES.includes(s))) {
        throw new HttpError(400, `scopes must be a subset of ${SCOPES.join(', ')}`);
      }
      const expires = body.expiresInSeconds ?? 30 * 86_400;
      if (!Number.isInteger(expires) || expires < 1 || expires > 365 * 86_400) {
        throw new HttpError(400, 'expiresInSeconds must be a whole number of seconds up to a year');
      }
      const token = this.issueApiToken(user.username, scopes, expires);
      return sendJson(res, 201, {
        id: token.id,
        token: token.token,
        scopes,
        expiresAt: new Date(token.expiresAt).toISOString(),
      });
    }
    if (req.method === 'GET' && pathname === '/api/tokens') {
      const mine = [...this.accessTokens.values()].filter(
        (t) => t.kind === 'api' && t.username === user.username && !t.revoked,
      );
      return sendJson(res, 200, {
        results: mine.map((t) => ({ id: t.id, scopes: t.scopes, expiresAt: new Date(t.expiresAt).toISOString() })),
      });
    }
    const id = /^\/api\/tokens\/([^/]+)$/.exec(pathname)?.[1];
    if (req.method === 'DELETE' && id !== undefined) {
      const token = [...this.accessTokens.values()].find((t) => t.id === id && t.username === user.username);
      if (token === undefined) {
        throw new HttpError(404, 'No such token');
      }
      token.revoked = true;
      res.writeHead(204).end();
      return;
    }
    throw new HttpError(404, `No route for ${req.method} ${pathname}`);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      throw new HttpError(413, 'Body too large');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
