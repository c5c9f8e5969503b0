import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module.js';
import { VaultModule } from '../vault/vault.module.js';
import { NotificationSenderService } from './notification-sender.service.js';
import { NotificationsRepository } from './notifications.repository.js';

/**
 * An agent's notifications (approval_requested, run_completed, run_failed): the worker's port that
 * sends one, signed as Standard Webhooks do, through the sites' guarded HTTP client. No table of its
 * own: it reads agents, runs, run_archives and approvals (a join in its repository). The secret's
 * sealing (notify-secret.ts) is shared with the agents feature, which writes it.
 */
@Module({
  imports: [SitesModule, VaultModule],
  providers: [NotificationsRepository, NotificationSenderService],
  exports: [NotificationSenderService],
})
export class NotificationsModule {}
