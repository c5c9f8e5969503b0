import type { TLSConfig } from '@temporalio/client';
import { effectiveTemporalAddress, type Settings } from '../config/settings.js';
import { probeTls } from './temporal-tls-probe.js';

export type TemporalAccessSettings = Pick<
  Settings,
  'temporalAddress' | 'temporalDevPort' | 'temporalTls' | 'temporalApiKey'
>;

/** What both `Connection` (client) and `NativeConnection` (worker) take to reach the frontend. */
export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plain gRPC (the dev server). */
  tls?: TLSConfig;
  /** Sent by the SDK as `authorization: Bearer <key>` on every call. */
  apiKey?: string;
}

/**
 * The one place the settings become connection options: the API's client, the worker's native
 * connection and its start-up client all connect the same way.
 */
export function temporalConnectionOptions(settings: TemporalAccessSettings): TemporalConnectionOptions {
  const options: TemporalConnectionOptions = { address: effectiveTemporalAddress(settings) };
  const tls = settings.temporalTls;
  if (tls !== undefined) {
    options.tls = {
      ...(tls.serverName !== undefined ? { serverNameOverride: tls.serverName } : {}),
      ...(tls.serverCa !== undefined ? { serverRootCACertificate: tls.serverCa } : {}),
      ...(tls.clientCert !== undefined && tls.clientKey !== undefined
        ? { clientCertPair: { crt: tls.clientCert, key: tls.clientKey } }
        : {}),
    };
  }
  if (settings.temporalApiKey !== undefined) {
    options.apiKey = settings.temporalApiKey;
  }
  return options;
}

/** How the processes reach Temporal, for log lines: the address and the kind of security, never a secret. */
export function describeTemporalConnection(settings: TemporalAccessSettings): string {
  const tls = settings.temporalTls;
  const how = [
    tls === undefined ? 'plain gRPC' : tls.clientCert !== undefined ? 'mTLS' : 'TLS',
    ...(settings.temporalApiKey !== undefined ? ['API key'] : []),
  ];
  return `${effectiveTemporalAddress(settings)} (${how.join(', ')})`;
}

/**
 * Thrown when a process cannot reach Temporal at start: the SDK's words, what they most likely mean
 * for the settings in use, and which variables to check.
 */
export class TemporalConnectError extends Error {
  override readonly name = 'TemporalConnectError';
}

/**
 * Turns a failed first call into a message an operator can act on. When TLS is in play, a probe
 * handshake finds what the gRPC client's "deadline" hides (refused certificate, untrusted server).
 */
export async function explainConnectError(
  err: unknown,
  settings: TemporalAccessSettings,
): Promise<TemporalConnectError> {
  const detail = errorChain(err);
  const target = describeTemporalConnection(settings);
  const tls = settings.temporalTls;
  let hint: string | undefined;
  if (/UNAUTHENTICATED|valid authentication credentials/i.test(detail)) {
    hint =
      settings.temporalApiKey !== undefined
        ? 'the server refused the API key: check TEMPORAL_API_KEY (and that it is for TEMPORAL_NAMESPACE)'
        : 'the server wants credentials: set TEMPORAL_API_KEY (Temporal Cloud) or TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY (mTLS)';
  } else if (/PERMISSION_DENIED|permission/i.test(detail)) {
    hint = 'the server refused these credentials for TEMPORAL_NAMESPACE: check the namespace and its permissions';
  } else if (tls !== undefined) {
    hint = await probeTls(effectiveTemporalAddress(settings), tls).catch(() => undefined);
  } else if (settings.temporalAddress !== undefined) {
    hint =
      'no answer over plain gRPC: check TEMPORAL_ADDRESS; a server with TLS needs TEMPORAL_TLS=true or the TLS ' +
      'settings, Temporal Cloud needs TEMPORAL_API_KEY or TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY';
  }
  hint ??= 'check TEMPORAL_ADDRESS and that the server is up';
  return new TemporalConnectError(`cannot connect to Temporal at ${target}: ${hint} (${detail})`, { cause: err });
}

function errorChain(err: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = err, depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}
