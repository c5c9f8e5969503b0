import type { Schemas } from '../../api/client';
import { formatDate } from '../../components/ui';

export type Site = Schemas['SiteResponseDto'];
export type SiteTool = Schemas['SiteToolDto'];
export type SiteScope = SiteTool['scope'];

/** Scopes in the order the service lists them (least to most powerful). */
export const SCOPE_ORDER: SiteScope[] = ['read', 'write', 'delete', 'admin'];

export type ConnectionState = 'oauth' | 'token' | 'none' | 'reconnect' | 'expired';

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
    return {
      state: 'oauth',
      label: 'Connected with OAuth',
      tone: 'ok',
      usable: true,
      scopes,
      detail: `Allowed scopes: ${scopes.join(', ') || 'none'}. Access is renewed automatically.`,
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
  return site.auth.type === 'oauth2' ? 'OAuth 2.0' : 'Bearer token';
}
