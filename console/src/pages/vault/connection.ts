import type { Schemas } from '../../api/client';
import { formatDate } from '../../components/ui';

export type Site = Schemas['SiteResponseDto'];
export type SiteTool = Schemas['SiteToolDto'];
export type SiteScope = SiteTool['scope'];

export function isMcp(site: Site): boolean {
  return site.protocol === 'mcp';
}

/** What the site is, in a few words: the list's and the site page's. */
export function protocolLabel(site: Site): string {
  return isMcp(site) ? 'MCP server' : 'agentsite site';
}

/** The annotations a tool carries, in words, in a fixed order (only the hints the server set to true). */
export function annotationWords(tool: SiteTool): string[] {
  const a = tool.annotations ?? {};
  return [
    a.readOnlyHint === true ? 'Read-only' : undefined,
    a.destructiveHint === true && a.readOnlyHint !== true ? 'Destructive' : undefined,
    a.idempotentHint === true ? 'Idempotent' : undefined,
    a.openWorldHint === true ? 'Reaches outside' : undefined,
  ].filter((w): w is string => w !== undefined);
}

/** Scopes in the order the service lists them (least to most powerful). */
export const SCOPE_ORDER: SiteScope[] = ['read', 'write', 'delete', 'admin'];

export type ConnectionState = 'oauth' | 'token' | 'none' | 'open' | 'needs_connection' | 'reconnect' | 'expired';

export interface Connection {
  state: ConnectionState;
  /** A few words: the list's badge and the site page's status. */
  label: string;
  /** The badge's colour class. */
  tone: 'ok' | 'warn' | 'bad';
  /** Whether the site's tools can be called with what is stored. */
  usable: boolean;
  /** One sentence: what the state means for the user, and what to do when the site is not usable. */
  detail: string;
  /** The scopes an OAuth connection was granted (empty otherwise; an MCP server's are its own names). */
  scopes: string[];
}

/**
 * The one reading of a site's connection, from its credential (kind, status, expiresAt, scopes): the
 * vault's list, the site page and the try-out form all show this, so they cannot disagree. A site
 * may hold a pasted token whatever its sign-in (the service sends it as a bearer token), so a token
 * on an OAuth site is a connection too.
 */
export function connectionOf(site: Site, now = Date.now()): Connection {
  const credential = site.credential;
  const name = site.name;
  const scopes = credential.kind === 'oauth2' ? (credential.scopes ?? []) : [];
  if (isMcp(site) && site.status === 'needs_connection' && credential.status !== 'reauth_required') {
    return {
      state: 'needs_connection',
      label: 'Needs to be connected',
      tone: 'warn',
      usable: false,
      scopes,
      detail:
        credential.kind === null
          ? `${name} asks for a sign-in before it lists its tools: ${
              site.auth.type === 'oauth2' ? 'connect it with OAuth, or paste' : 'paste'
            } an API token made on ${name}. Its tools appear once it accepts the connection.`
          : `${name} did not accept what is stored, so its tools are not listed: connect it again or store another token.`,
    };
  }
  if (isMcp(site) && credential.kind === null) {
    // A server that lists its tools without asking: calls carry no credential.
    return {
      state: 'open',
      label: 'No sign-in needed',
      tone: 'ok',
      usable: true,
      scopes,
      detail: `${name} lists and runs its tools without a credential. Store a token if it asks for one later.`,
    };
  }
  if (credential.kind === null) {
    return {
      state: 'none',
      label: 'Not connected',
      tone: 'warn',
      usable: false,
      scopes,
      detail:
        site.auth.type === 'oauth2'
          ? `Connect ${name} with OAuth, or store an API token made on ${name}, before calling its tools.`
          : `Store an API token made on ${name} before calling its tools.`,
    };
  }
  if (credential.status === 'reauth_required') {
    return {
      state: 'reconnect',
      label: 'Needs to be connected again',
      tone: 'bad',
      usable: false,
      scopes,
      detail: `${name} refused to renew the connection (it may have been revoked there): tools cannot be called until you approve it again.`,
    };
  }
  const expiresAt = credential.expiresAt ?? null;
  if (credential.kind === 'bearer' && expiresAt !== null && Date.parse(expiresAt) <= now) {
    return {
      state: 'expired',
      label: 'Token expired',
      tone: 'bad',
      usable: false,
      scopes,
      detail: `The token stored for ${name} expired on ${formatDate(expiresAt)}: store a new one.`,
    };
  }
  if (credential.kind === 'oauth2') {
    // The service says whether it can renew the access; without a refresh token it ends at expiresAt.
    const renewable = credential.connection?.refreshable !== false;
    const endsAt = credential.connection?.expiresAt ?? expiresAt;
    if (!renewable && endsAt !== null && (credential.connection?.status === 'expired' || Date.parse(endsAt) <= now)) {
      return {
        state: 'expired',
        label: 'Connection expired',
        tone: 'bad',
        usable: false,
        scopes,
        detail: `Expired at ${formatDate(endsAt)}: reconnect ${name} to call its tools again (${name} does not let its access be renewed).`,
      };
    }
    return {
      state: 'oauth',
      label: 'Connected with OAuth',
      tone: renewable || endsAt === null ? 'ok' : 'warn',
      usable: true,
      scopes,
      detail:
        renewable || endsAt === null
          ? `Allowed scopes: ${scopes.join(', ') || 'none'}. Access is renewed automatically.`
          : `Connected — expires at ${formatDate(endsAt)}, reconnect then: ${name} does not let its access be renewed. Allowed scopes: ${scopes.join(', ') || 'none'}.`,
    };
  }
  return {
    state: 'token',
    label: 'Connected with a token',
    tone: 'ok',
    usable: true,
    scopes,
    detail:
      expiresAt === null
        ? 'The token has no expiry date (it lasts until it is revoked on the site).'
        : `The token expires on ${formatDate(expiresAt)}.`,
  };
}

/** The least set of scopes the tools need, in the service's order. */
export function scopesFor(tools: SiteTool[]): SiteScope[] {
  const needed = new Set(tools.map((t) => t.scope));
  return SCOPE_ORDER.filter((s) => needed.has(s));
}

export function authLabel(site: Site): string {
  if (site.auth.type === 'oauth2') {
    return 'OAuth 2.0';
  }
  return isMcp(site) && site.status === 'ready' && site.credential.kind === null ? 'None asked' : 'Bearer token';
}
