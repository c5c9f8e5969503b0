import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AgentsModule } from './agents/agents.module.js';
import { AuthModule } from './auth/auth.module.js';
import { PrefetchModule } from './auth/prefetch.js';
import { ChatModule } from './chat/chat.module.js';
import { BillingModule } from './billing/billing.module.js';
import { AdminGuard, JwtAuthGuard, TermsGuard } from './auth/guards.js';
import { AppErrorFilter } from './common/error-filter.js';
import { AppValidationPipe } from './common/validation.js';
import { SettingsModule } from './config/settings.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthController } from './health/health.controller.js';
import { TemporalModule } from './temporal/temporal.module.js';
import { UsersModule } from './users/users.module.js';
import { VaultModule } from './vault/vault.module.js';
import { WorkspaceScopeGuard } from './workspaces/workspace-scope.guard.js';
import { WorkspacesModule } from './workspaces/workspaces.module.js';

@Module({
  imports: [
    SettingsModule,
    DatabaseModule,
    TemporalModule,
    UsersModule,
    PrefetchModule,
    AuthModule,
    BillingModule,
    VaultModule,
    AgentsModule,
    ChatModule,
    WorkspacesModule,
  ],
  controllers: [HealthController],
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
export class AppModule {}
