import { Inject, Injectable, Optional } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { JwtStrategy, bearerToken, hasAuthorizationHeader } from '../auth/jwt.strategy.js';
import type { AuthUser, JwtClaims } from '../auth/auth-user.js';
import { AppError } from '../common/app-error.js';
import { addressKey } from '../common/client-address.js';
import { requestLogFields } from '../common/correlation.js';
import { ApiRateLimits, consumeOrThrow } from '../common/rate-limit.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import type { AnyRequest } from '../common/http.js';
import { UsersService } from '../users/users.service.js';
import { type Scope, WORKSPACE_HEADER } from '../workspaces/scope.js';
import { ScopeResolver } from '../workspaces/scope-resolver.js';
import { MCP_TOKEN_VERIFIER, type McpCaller, type McpTokenVerifier } from './caller.js';

/** A request /mcp does not serve: no token, or one it does not take (answered 401 with the challenge). */
export class McpUnauthorized extends Error {
  override readonly name = 'McpUnauthorized';

  constructor(
    /** Whether a token was sent (the challenge then says `error="invalid_token"`). */
    readonly tokenSent: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** Who is calling, once the bearer token held: the caller and the scope it acts in (read now). */
export interface McpPrincipal {
  caller: McpCaller;
  scope: Scope;
}

/**
 * The bearer check of /mcp: an access token of the MCP authorization server (MCP_TOKEN_VERIFIER, when
 * its module is there), else, only when MCP_ALLOW_API_TOKENS is on, the service's own API token (a
 * login JWT, with X-Workspace-Id optional), checked as /api checks it. Counts the per-address and the
 * per-user limit of the REST API (RATE_LIMITED). The scope's membership and role are read on every
 * request: a member removed from the workspace, or a user deleted, stops being served at once.
 */
@Injectable()
export class McpBearer {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly limits: ApiRateLimits,
    private readonly strategy: JwtStrategy,
    private readonly jwt: JwtService,
    private readonly users: UsersService,
    private readonly scopes: ScopeResolver,
    @Optional() @Inject(MCP_TOKEN_VERIFIER) private readonly verifier?: McpTokenVerifier,
  ) {}

  async authenticate(req: AnyRequest): Promise<McpPrincipal> {
    const address = consumeOrThrow(
      this.limits.perIp,
      addressKey(req.ip),
      'RATE_LIMITED',
      'Too many requests from this address',
    );
    const [limited, principal] = await Promise.allSettled([address, this.principal(req)]);
    if (limited.status === 'rejected') {
      throw limited.reason;
    }
    if (principal.status === 'rejected') {
      throw principal.reason;
    }
    requestLogFields(req).userId = principal.value.scope.user.id;
    return principal.value;
  }

  private async principal(req: AnyRequest): Promise<McpPrincipal> {
    const token = bearerToken(req);
    if (token === null) {
      throw new McpUnauthorized(
        hasAuthorizationHeader(req),
        'Authentication required: send Authorization: Bearer <token>',
      );
    }
    const caller = await this.verifier?.verify(token);
    if (caller !== undefined) {
      return this.oauthPrincipal(caller);
    }
    if (!this.settings.mcpServer.allowApiTokens) {
      throw new McpUnauthorized(true, 'This token is not valid here');
    }
    return this.apiTokenPrincipal(req, token);
  }

  /** An access token of the MCP authorization server: its user and workspace, read again now. */
  private async oauthPrincipal(caller: McpCaller): Promise<McpPrincipal> {
    const [user] = await Promise.all([
      this.users.findOrFail(caller.userId).catch(() => {
        throw new McpUnauthorized(true, 'The token belongs to no user');
      }),
      consumeOrThrow(this.limits.perUser, caller.userId, 'RATE_LIMITED', 'Too many requests for this user'),
    ]);
    return { caller, scope: await this.scopeOf(user, caller.workspaceId) };
  }

  /**
   * The service's API token, as JwtAuthGuard checks it (signature, user, revocation, per-user limit);
   * a token whose signature this process verified before is not verified again (JwtStrategy's cache).
   */
  private async apiTokenPrincipal(req: AnyRequest, token: string): Promise<McpPrincipal> {
    let auth: AuthUser;
    try {
      auth = await (this.strategy.rememberedUser(req) ?? this.verifiedUser(req, token));
    } catch (err) {
      if (err instanceof McpUnauthorized || (err instanceof AppError && err.code === 'RATE_LIMITED')) {
        throw err;
      }
      throw new McpUnauthorized(true, err instanceof AppError ? err.message : 'The token is not valid');
    }
    const { user } = auth;
    const header = req.headers[WORKSPACE_HEADER];
    const workspaceId = typeof header === 'string' && header !== '' ? header : null;
    const caller: McpCaller = {
      userId: user.id,
      workspaceId,
      grantId: null,
      clientId: null,
      scopes: [],
      expiresAt: auth.token.expiresAt,
    };
    return { caller, scope: await this.scopeOf(user, workspaceId) };
  }

  /** A token not verified here before: its signature and expiry, then what every request checks. */
  private async verifiedUser(req: AnyRequest, token: string): Promise<AuthUser> {
    let claims: JwtClaims;
    try {
      claims = await this.jwt.verifyAsync<JwtClaims>(token);
    } catch {
      throw new McpUnauthorized(true, 'The token is malformed, expired or its signature is invalid');
    }
    return this.strategy.validate(req, claims);
  }

  private async scopeOf(user: Scope['user'], workspaceId: string | null): Promise<Scope> {
    try {
      return await this.scopes.scopeOf(user, workspaceId);
    } catch (err) {
      if (err instanceof AppError && err.code === 'WORKSPACE_NOT_FOUND') {
        // A grant for a workspace the user has left: the token no longer acts anywhere.
        throw new McpUnauthorized(true, 'The token acts in a workspace you are no longer a member of');
      }
      throw err;
    }
  }
}
