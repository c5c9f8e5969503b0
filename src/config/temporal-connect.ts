import type { EnvReader } from './env-reader.js';

/** The Temporal SDK's own default for a connection's first call (`connectTimeout`). */
export const DEFAULT_TEMPORAL_CONNECT_TIMEOUT_SECONDS = 10;

/** How long the worker waits for Temporal when it starts. */
export interface TemporalConnectSettings {
  /**
   * Seconds the worker's start-up connection waits for the Temporal frontend to answer before it
   * gives up and exits explaining why (TEMPORAL_CONNECT_TIMEOUT_SECONDS). A refused TLS handshake
   * is retried by gRPC until then, so this is also how long a wrong certificate takes to be reported.
   */
  temporalConnectTimeoutSeconds: number;
}

/** Reads TEMPORAL_CONNECT_TIMEOUT_SECONDS (1 to 300, default the SDK's 10). */
export function readTemporalConnectSettings(reader: EnvReader): TemporalConnectSettings {
  return {
    temporalConnectTimeoutSeconds: reader.int(
      'TEMPORAL_CONNECT_TIMEOUT_SECONDS',
      DEFAULT_TEMPORAL_CONNECT_TIMEOUT_SECONDS,
      1,
      300,
    ),
  };
}
