import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminModule } from './admin/admin.module.js';
import { AgentsModule } from './agents/agents.module.js';
import { AuthModule } from './auth/auth.module.js';
import { PrefetchModule } from './auth/prefetch.js';
import { ChatModule } from './chat/chat.module.js';
import { ConformanceModule } from './conformance/conformance.module.js';
import { BillingModule } from './billing/billing.module.js';
import { AdminGuard, JwtAuthGuard, TermsGuard } from './auth/guards.js';
import { CacheModule } from './common/cache/invalidation-bus.js';
import { AppErrorFilter } from './common/error-filter.js';
import { AppValidationPipe } from './common/validation.js';
import { SettingsModule } from './config/settings.module.js';
import { type Settings } from './config/settings.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { McpAuthModule } from './mcp-auth/mcp-auth.module.js';
import { McpServerModule } from './mcp-server/mcp-server.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { ApprovalsModule } from './approvals/approvals.module.js';
import { RunsModule } from './runs/runs.module.js';
import { TemporalModule } from './temporal/temporal.module.js';
import { TracingModule } from './tracing/tracing.module.js';
import { TemporalCodecModule } from './temporal-codec/temporal-codec.module.js';
import { ToolsModule } from './tools/tools.module.js';
import { UsersModule } from './users/users.module.js';
import { VaultModule } from './vault/vault.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { WorkspaceScopeGuard } from './workspaces/workspace-scope.guard.js';
import { WorkspacesModule } from './workspaces/workspaces.module.js';

/**
 * The API: every feature's module (each registers its own routes) and the global guards, pipe and
 * filter. Built with `AppModule.forRoot(settings)`: the settings main.ts loaded, not parsed again.
 */
@Module({
  imports: [
    HealthModule,
    DatabaseModule,
    CacheModule,
    TemporalModule,
    UsersModule,
    AdminModule,
    PrefetchModule,
    AuthModule,
    BillingModule,
    // In this order, each feature right after the one it builds on: the API document lists the
    // routes in the order Nest meets the modules.
    VaultModule,
    OAuthModule,
    ToolsModule,
    AgentsModule,
    RunsModule,
    ApprovalsModule,
    WebhooksModule,
    ChatModule,
    WorkspacesModule,
    TemporalCodecModule,
    ConformanceModule,
    TracingModule,
    MetricsModule,
    // The authorization server for MCP clients (global: it provides MCP_TOKEN_VERIFIER to /mcp).
    McpAuthModule,
    // agentsite's own MCP endpoint (/mcp, outside the /api prefix: mounted by createApp).
    McpServerModule,
  ],
  providers: [
    // Guards run in this order: address limit with authentication and user limit (concurrently, see
    // JwtAuthGuard), workspace scope, terms, admin.
    { provide: APP_GUARD, useClass: JwtAuthGuard },
    { provide: APP_GUARD, useClass: WorkspaceScopeGuard },
    { provide: APP_GUARD, useClass: TermsGuard },
    { provide: APP_GUARD, useClass: AdminGuard },
    { provide: APP_PIPE, useClass: AppValidationPipe },
    { provide: APP_FILTER, useClass: AppErrorFilter },
  ],
})
export class AppModule {
  static forRoot(settings: Settings): DynamicModule {
    return { module: AppModule, imports: [SettingsModule.forRoot(settings)] };
  }
}
