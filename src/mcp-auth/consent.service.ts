import { Injectable } from '@nestjs/common';
import type { Client, InteractionResults } from 'oidc-provider';
import { AppError } from '../common/app-error.js';
import { McpAuthorizationServer } from './authorization-server.js';
import type { McpConsentDto, McpConsentResultDto } from './dto/mcp-consent.dto.js';
import { McpAuthRepository } from './mcp-auth.repository.js';
import { artifactKey } from './oidc-adapter.js';
import { MCP_SCOPE } from './provider-config.js';

/** What an interaction's uid looks like (oidc-provider's nanoid); anything else names nothing. */
const UID = /^[A-Za-z0-9_-]{1,64}$/;

/** The name of the personal scope among the workspaces offered. */
const PERSONAL = 'Personal';

/** Scopes a client may ask for and get: the MCP scope, and what oidc-provider always knows. */
const GRANTABLE_SCOPES = [MCP_SCOPE, 'openid', 'offline_access'];

const sessionNotFound = (): AppError =>
  new AppError('SESSION_NOT_FOUND', 'This connection request has expired or does not exist');

/**
 * The consent page's two calls: what is asked (the app, the scope, the workspaces the user may pick)
 * and the user's answer, which finishes oidc-provider's interaction (login and grant, or
 * access_denied) and tells the browser where to go next.
 */
@Injectable()
export class McpConsentService {
  constructor(
    private readonly server: McpAuthorizationServer,
    private readonly repository: McpAuthRepository,
  ) {}

  private async interaction(uid: string) {
    const interaction = UID.test(uid) ? await this.server.provider.Interaction.find(uid) : undefined;
    if (interaction === undefined || typeof interaction.params.client_id !== 'string') {
      throw sessionNotFound();
    }
    return interaction;
  }

  private async clientOf(clientId: string): Promise<Client> {
    const client = await this.server.provider.Client.find(clientId).catch(() => undefined);
    if (client === undefined) {
      throw sessionNotFound();
    }
    return client;
  }

  async describe(userId: string, uid: string): Promise<McpConsentDto> {
    const interaction = await this.interaction(uid);
    const client = await this.clientOf(interaction.params.client_id as string);
    const memberships = await this.repository.memberships(userId);
    return {
      uid,
      client: {
        id: client.clientId,
        name: client.clientName ?? client.clientId,
        uri: client.clientUri ?? null,
        logoUri: client.logoUri ?? null,
        redirectHost: redirectHostOf(interaction.params.redirect_uri, client),
      },
      scopes: [MCP_SCOPE],
      workspaces: [{ id: null, name: PERSONAL, role: 'owner' }, ...memberships],
    };
  }

  async decide(
    userId: string,
    uid: string,
    decision: { approve: boolean; workspaceId: string | null },
  ): Promise<McpConsentResultDto> {
    const interaction = await this.interaction(uid);
    if (interaction.result !== undefined) {
      throw sessionNotFound(); // answered already: one answer per request
    }
    let result: InteractionResults;
    if (!decision.approve) {
      result = { error: 'access_denied', error_description: 'The user did not connect the app' };
    } else {
      const { workspaceId } = decision;
      // Any member may connect an app to a workspace, viewers too: /mcp then lets it do what the role allows.
      if (workspaceId !== null && !(await this.repository.memberships(userId)).some((w) => w.id === workspaceId)) {
        throw new AppError('WORKSPACE_NOT_FOUND', 'Workspace not found');
      }
      const client = await this.clientOf(interaction.params.client_id as string);
      const grant = new this.server.provider.Grant({ accountId: userId, clientId: client.clientId });
      // The scopes asked for that the server knows (oidc-provider counts them as the grant's own
      // scopes too), and the one scope of the resource /mcp.
      const asked = String(interaction.params.scope ?? '').split(' ');
      const known = asked.filter((scope) => GRANTABLE_SCOPES.includes(scope));
      if (known.length > 0) {
        grant.addOIDCScope(known.join(' '));
      }
      grant.addResourceScope(this.server.resource, MCP_SCOPE);
      const grantId = await grant.save();
      await this.repository.insertConnectedApp({
        grantId,
        userId,
        workspaceId,
        clientId: client.clientId,
        clientName: client.clientName ?? client.clientId,
        redirectHost: redirectHostOf(interaction.params.redirect_uri, client),
      });
      result = { login: { accountId: userId, remember: false }, consent: { grantId } };
    }
    await this.forgetOtherAccount(userId, interaction);
    interaction.result = result;
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    return { redirectTo: interaction.returnTo };
  }

  /**
   * The provider's browser session may belong to another user of this browser (an earlier consent):
   * it is ended, so the resume continues as the user who answered instead of asking to log out.
   */
  private async forgetOtherAccount(
    userId: string,
    interaction: { session?: { accountId: string; cookie?: string } },
  ): Promise<void> {
    const session = interaction.session;
    if (session === undefined || session.accountId === userId) {
      return;
    }
    if (session.cookie !== undefined) {
      await this.repository.destroyArtifact('Session', artifactKey('Session', session.cookie));
    }
    interaction.session = undefined;
  }
}

function redirectHostOf(redirectUri: unknown, client: Client): string {
  const uri = typeof redirectUri === 'string' ? redirectUri : client.redirectUris?.[0];
  return URL.parse(uri ?? '')?.host ?? '';
}
