import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { ApprovalsModule } from '../approvals/approvals.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { CreditsModule } from '../credits/credits.module.js';
import { RunsModule } from '../runs/runs.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { UsersModule } from '../users/users.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { WorkspacesModule } from '../workspaces/workspaces.module.js';
import { McpAgentTools } from './mcp-agent-tools.js';
import { McpApprovals } from './mcp-approvals.js';
import { McpBearer } from './mcp-bearer.js';
import { McpEndpoint } from './mcp-endpoint.js';
import { McpSiteTools } from './mcp-site-tools.js';
import { McpSurface } from './mcp-surface.js';

/**
 * agentsite's own MCP endpoint (/mcp): the vault's site tools, the agents as tools (and decide_approval
 * for their runs' pending approvals) and their runs as resources, for MCP clients with a token of the MCP authorization server (MCP_TOKEN_VERIFIER, from
 * its module when present) or, when MCP_ALLOW_API_TOKENS allows it, an API token. createApp mounts
 * McpEndpoint's handler at /mcp, outside the /api prefix and before the API's body parsers.
 */
@Module({
  imports: [
    // The API's rate limits, JWT strategy and JwtService (API tokens, when MCP_ALLOW_API_TOKENS allows them).
    AuthModule,
    UsersModule,
    WorkspacesModule,
    VaultModule,
    ToolsModule,
    AgentsModule,
    RunsModule,
    CreditsModule,
    // decide_approval decides as POST /api/runs/:id/approvals/:approvalId does.
    ApprovalsModule,
  ],
  providers: [McpBearer, McpSiteTools, McpAgentTools, McpApprovals, McpSurface, McpEndpoint],
  exports: [McpEndpoint],
})
export class McpServerModule {}
