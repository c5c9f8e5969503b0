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

/** An MCP server's scope whose last word names one of ours: `read`, `files:read`, `mcp.tools.write`, `repo_read-only`. */
const NAMED_SCOPE = /(?:^|[:./_\s-])(read(?:[-_]?only)?|write|delete|admin)$/i;

/** The scope of ours an MCP server's scope stands for, when its name says so; else undefined. */
export function siteScopeNamed(serverScope: string): SiteScope | undefined {
  const word = NAMED_SCOPE.exec(serverScope)?.[1]?.toLowerCase();
  return word === undefined ? undefined : word.startsWith('read') ? 'read' : (word as SiteScope);
}

/**
 * What to ask an MCP server for, for these tools (their scope derived from annotations): the least of
 * its scopes where they allow it, else all of them. They allow it when some are named after ours
 * (siteScopeNamed) and each scope the tools need has one: then the named scopes the tools do not need
 * are left out, and the scopes named otherwise (offline_access, mcp, repo) are kept, since nothing says
 * what they gate. `chosen` tells which case it was (true: chosen by what the tools need).
 */
export function mcpScopesFor(
  offered: string[],
  tools: Array<{ name: string; scope?: string }>,
): { scopes: string[]; chosen: boolean } {
  const needed = new Set(scopesFor(tools));
  const named = new Set(offered.map(siteScopeNamed).filter((s) => s !== undefined));
  if (named.size === 0 || [...needed].some((s) => !named.has(s))) {
    return { scopes: [...offered], chosen: false };
  }
  const scopes = offered.filter((scope) => {
    const ours = siteScopeNamed(scope);
    return ours === undefined || needed.has(ours);
  });
  return { scopes, chosen: true };
}

/**
 * Of the scopes these tools need, those an MCP credential lacks: known only where the server's scopes
 * are named after ours (mcpScopesFor), else none. A step-up the server asked for (the credential's
 * required scope) counts as missing too, as ours when it is named after one.
 */
export function missingMcpScopes(
  offered: string[],
  tools: Array<{ name: string; scope?: string }>,
  granted: string[],
  requiredScope: string | null,
): SiteScope[] {
  const have = new Set(granted);
  const missing = new Set<SiteScope>();
  const asked = mcpScopesFor(offered, tools);
  for (const scope of asked.chosen ? asked.scopes : []) {
    const ours = siteScopeNamed(scope);
    if (ours !== undefined && !have.has(scope)) {
      missing.add(ours);
    }
  }
  const stepUp = requiredScope === null ? undefined : siteScopeNamed(requiredScope);
  if (stepUp !== undefined) {
    missing.add(stepUp);
  }
  return SITE_SCOPES.filter((s) => missing.has(s));
}
