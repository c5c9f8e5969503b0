import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import type { McpCaller, McpTokenVerifier } from '../mcp-server/caller.js';
import { McpAuthorizationServer } from './authorization-server.js';
import type { ConnectedAppListDto } from './dto/connected-apps.dto.js';
import { McpAuthRepository } from './mcp-auth.repository.js';

/** How often (at most) a grant's last use is written, in milliseconds. */
const LAST_USE_EVERY_MS = 60_000;

/**
 * The apps a user connected (one OAuth grant each): the list, the revocation, and the verification
 * of their access tokens at /mcp (MCP_TOKEN_VERIFIER).
 */
@Injectable()
export class ConnectedAppsService implements McpTokenVerifier {
  constructor(
    private readonly server: McpAuthorizationServer,
    private readonly repository: McpAuthRepository,
  ) {}

  async list(userId: string): Promise<ConnectedAppListDto> {
    const rows = await this.repository.listConnectedApps(userId);
    return {
      apps: rows.map((row) => ({
        id: row.id,
        clientId: row.clientId,
        clientName: row.clientName,
        redirectHost: row.redirectHost,
        workspace: row.workspaceId === null ? null : { id: row.workspaceId, name: row.workspaceName ?? '' },
        createdAt: row.createdAt.toISOString(),
        lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
      })),
    };
  }

  /** Revokes the app: its grant and every code and token of it are gone at once. */
  async revoke(userId: string, id: string): Promise<void> {
    const app = UUID.test(id) ? await this.repository.findConnectedApp(id, userId) : null;
    if (app === null) {
      throw new AppError('NOT_FOUND', 'Connected app not found');
    }
    const { provider } = this.server;
    await Promise.all([
      provider.AccessToken.revokeByGrantId(app.grantId),
      provider.RefreshToken.revokeByGrantId(app.grantId),
      provider.AuthorizationCode.revokeByGrantId(app.grantId),
    ]);
    const grant = await provider.Grant.find(app.grantId);
    await grant?.destroy();
    await this.repository.deleteConnectedApp(app.id);
  }

  /**
   * An access token of this authorization server for `{base}/mcp`, unexpired, whose grant and
   * connected app are still there; records the app's last use at most once a minute.
   */
  async verify(token: string): Promise<McpCaller | undefined> {
    // Its access tokens are opaque (provider-config.ts), ids of the URL-safe alphabet without a dot:
    // a token with one (the service's API token, a JWT) is not looked up.
    if (token.length === 0 || token.length > 512 || token.includes('.')) {
      return undefined;
    }
    const { provider } = this.server;
    const accessToken = await provider.AccessToken.find(token);
    if (accessToken === undefined || accessToken.isExpired || accessToken.grantId === undefined) {
      return undefined;
    }
    const audience = accessToken.aud;
    if (audience !== this.server.resource && !(Array.isArray(audience) && audience.includes(this.server.resource))) {
      return undefined;
    }
    const [grant, app] = await Promise.all([
      provider.Grant.find(accessToken.grantId),
      this.repository.findConnectedAppByGrant(accessToken.grantId),
    ]);
    if (grant === undefined || app === null || app.userId !== accessToken.accountId) {
      return undefined;
    }
    if (app.lastUsedAt === null || Date.now() - app.lastUsedAt.getTime() >= LAST_USE_EVERY_MS) {
      await this.repository.touchConnectedApp(app.grantId);
    }
    return {
      userId: app.userId,
      workspaceId: app.workspaceId,
      grantId: app.grantId,
      clientId: accessToken.clientId ?? app.clientId,
      scopes: (accessToken.scope ?? '').split(' ').filter((scope) => scope.length > 0),
      expiresAt: new Date((accessToken.exp ?? 0) * 1000),
    };
  }
}
