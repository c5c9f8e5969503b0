import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { NotificationSenderService } from './notification-sender.service.js';
import { NotificationsRepository } from './notifications.repository.js';

/**
 * An agent's notifications (approval_requested, run_completed, run_failed): the worker's port that
 * sends one, signed as Standard Webhooks do, through the sites' guarded HTTP client. No table of its
 * own: it reads agents, runs, run_archives and approvals (a join in its repository), and a completed
 * run's answer from its history before its queue has archived it (RunsService). It opens the secret
 * the agents feature sealed (src/agents/notify-secret.ts).
 */
@Module({
  imports: [SitesModule, VaultModule, RunsModule],
  providers: [NotificationsRepository, NotificationSenderService],
  exports: [NotificationSenderService],
})
export class NotificationsModule {}
