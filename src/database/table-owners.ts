/**
 * Each table's owner: the one feature folder (src/<feature>/) whose repositories write it. Other
 * features may read it (a join in their own repository: the SQL lives with the feature that asks)
 * but change its rows only through the owner's exported service (or a hook the owner registers
 * with them, e.g. CreditHooks, when the dependency points the other way), so a rule about a
 * table's rows is in one folder. table-owners.spec.ts checks the map against the migrations and
 * the writes in src/ against the map.
 */
export const TABLE_OWNERS: Readonly<Record<string, string>> = {
  users: 'users',
  revoked_tokens: 'auth',
  rate_limits: 'common',
  sites: 'vault',
  site_credentials: 'vault',
  oauth_states: 'oauth',
  mcp_oauth_clients: 'oauth',
  agents: 'agents',
  runs: 'runs',
  run_archives: 'runs',
  run_tool_sets: 'runs',
  credit_ledger: 'credits',
  credit_holds: 'credits',
  chat_sessions: 'chat',
  chat_messages: 'chat',
  chat_turn_slots: 'chat',
  workspaces: 'workspaces',
  workspace_members: 'workspaces',
  workspace_invitations: 'workspaces',
  billing_customers: 'billing',
  credit_purchases: 'billing',
  billing_events: 'billing',
  tier_overrides: 'billing',
  webhook_deliveries: 'webhooks',
  mcp_authorization_state: 'mcp-auth',
  connected_apps: 'mcp-auth',
  approvals: 'approvals',
};

/**
 * The functions the migrations leave in the database, and the feature that each belongs to. A
 * business rule is code of its feature (TypeScript), not PL/pgSQL; these are not rules but the
 * cache's protocol: a trigger on each cached table sends the key of a changed row to every
 * process's cache (common/cache/invalidation-bus.ts reads the messages), whichever process wrote it.
 */
export const SQL_FUNCTIONS: Readonly<Record<string, string>> = {
  agentsite_cache_notify_user: 'common',
  agentsite_cache_notify_token: 'common',
  agentsite_cache_notify_site: 'common',
  agentsite_cache_notify_site_credential: 'common',
  agentsite_cache_notify_scope_sites: 'common',
};
