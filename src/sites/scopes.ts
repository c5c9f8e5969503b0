export const SITE_SCOPES = ['read', 'write', 'delete', 'admin'] as const;
export type SiteScope = (typeof SITE_SCOPES)[number];

const RULES: Array<[RegExp, SiteScope]> = [
  [/^(search|get|list|read|find|query|fetch)/i, 'read'],
  [/^(create|add|update|edit|set|post|send|upload)/i, 'write'],
  [/^(delete|remove|destroy)/i, 'delete'],
  [/^(admin|manage|user)/i, 'admin'],
];

/**
 * The scope a tool needs: its manifest `scope` when given, else guessed from its name
 * (search/get/list… → read, create/update… → write, delete… → delete, admin/manage/user… → admin,
 * anything else → write, the safe side).
 */
export function deriveScope(tool: { name: string; scope?: string }): SiteScope {
  if (tool.scope !== undefined && (SITE_SCOPES as readonly string[]).includes(tool.scope)) {
    return tool.scope as SiteScope;
  }
  return RULES.find(([pattern]) => pattern.test(tool.name))?.[1] ?? 'write';
}

/** The least set of scopes that covers the given tools, in canonical order. */
export function scopesFor(tools: Array<{ name: string; scope?: string }>): SiteScope[] {
  const needed = new Set(tools.map(deriveScope));
  return SITE_SCOPES.filter((scope) => needed.has(scope));
}
