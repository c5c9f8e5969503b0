import type { Schemas } from '../../api/client';

export type Site = Schemas['SiteResponseDto'];
export type SiteTool = Schemas['SiteToolDto'];
export type SiteScope = SiteTool['scope'];

/** Scopes in the order the service lists them (least to most powerful). */
export const SCOPE_ORDER: SiteScope[] = ['read', 'write', 'delete', 'admin'];

export type ConnectionState = 'connected' | 'token' | 'none' | 'reconnect' | 'expired';

export interface Connection {
  state: ConnectionState;
  label: string;
  /** The badge's colour class. */
  tone: 'ok' | 'warn' | 'bad';
}

/**
 * What the site's credential is good for, as the service reports it: `status: reauth_required` when
 * the site refused a refresh (connect again), an expired bearer token (store a new one).
 */
export function connectionOf(site: Site, now = Date.now()): Connection {
  const credential = site.credential;
  if (credential.kind === null) {
    return { state: 'none', label: 'Not connected', tone: 'warn' };
  }
  if (credential.status === 'reauth_required') {
    return { state: 'reconnect', label: 'Needs to be connected again', tone: 'bad' };
  }
  if (
    credential.kind === 'bearer' &&
    credential.expiresAt !== null &&
    credential.expiresAt !== undefined &&
    Date.parse(credential.expiresAt) <= now
  ) {
    return { state: 'expired', label: 'Token expired', tone: 'bad' };
  }
  if (credential.kind === 'oauth2') {
    return { state: 'connected', label: 'Connected', tone: 'ok' };
  }
  return { state: 'token', label: 'Token stored', tone: 'ok' };
}

/** The least set of scopes the tools need, in the service's order. */
export function scopesFor(tools: SiteTool[]): SiteScope[] {
  const needed = new Set(tools.map((t) => t.scope));
  return SCOPE_ORDER.filter((s) => needed.has(s));
}

export function authLabel(site: Site): string {
  return site.auth.type === 'oauth2' ? 'OAuth 2.0' : 'Bearer token';
}
