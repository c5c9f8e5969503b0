import type { EnvReader } from './env-reader.js';

/** The MCP endpoint's settings (MCP_*): how long a tool call waits for a run, who may call, token lifetimes. */
export interface McpServerSettings {
  /** Seconds an `agent__<name>` call without the Tasks extension waits for its run (MCP_RUN_WAIT_SECONDS). */
  runWaitSeconds: number;
  /** Whether the service's own API tokens (login JWTs) are accepted at /mcp (MCP_ALLOW_API_TOKENS); OAuth tokens always are. */
  allowApiTokens: boolean;
  /** Lifetime of an access token issued to an MCP client (MCP_ACCESS_TOKEN_SECONDS). */
  accessTokenSeconds: number;
  /** Lifetime of an MCP client's refresh token, renewed on each rotation (MCP_REFRESH_TOKEN_DAYS). */
  refreshTokenDays: number;
}

/** Reads MCP_RUN_WAIT_SECONDS, MCP_ALLOW_API_TOKENS, MCP_ACCESS_TOKEN_SECONDS and MCP_REFRESH_TOKEN_DAYS. */
export function readMcpServerSettings(reader: EnvReader): McpServerSettings {
  return {
    runWaitSeconds: reader.int('MCP_RUN_WAIT_SECONDS', 50, 0, 600),
    allowApiTokens: reader.bool('MCP_ALLOW_API_TOKENS', false),
    accessTokenSeconds: reader.int('MCP_ACCESS_TOKEN_SECONDS', 900, 60, 86400),
    refreshTokenDays: reader.int('MCP_REFRESH_TOKEN_DAYS', 30, 1, 365),
  };
}
