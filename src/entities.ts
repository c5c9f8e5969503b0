import { AgentEntity } from './agents/agent.entity.js';
import { ApprovalEntity } from './approvals/approval.entity.js';
import { RevokedTokenEntity } from './auth/revoked-token.entity.js';
import { BillingCustomerEntity, BillingEventEntity, CreditPurchaseEntity } from './billing/billing.entities.js';
import { TierOverrideEntity } from './billing/tier-override.entity.js';
import { ChatMessageEntity, ChatSessionEntity } from './chat/chat.entities.js';
import type { EntityClass } from './database/data-source.js';
import { ConnectedAppEntity, McpAuthorizationStateEntity } from './mcp-auth/mcp-auth.entities.js';
import { McpOAuthClientEntity } from './oauth/mcp-oauth-client.entity.js';
import { OAuthStateEntity } from './oauth/oauth-state.entity.js';
import { RunArchiveEntity } from './runs/run-archive.entity.js';
import { RunEntity } from './runs/run.entity.js';
import { RunToolSetEntity } from './runs/run-tool-set.entity.js';
import { UserEntity } from './users/user.entity.js';
import { CredentialEntity } from './vault/credential.entity.js';
import { SiteEntity } from './vault/site.entity.js';
import { WebhookDeliveryEntity } from './webhooks/webhook-delivery.entity.js';
import { WorkspaceEntity, WorkspaceInvitationEntity, WorkspaceMemberEntity } from './workspaces/workspace.entities.js';

/**
 * Every entity, for scripts that compare the schema with the entities (migration:generate). The API
 * and the worker do not use this list: their data source loads each feature module's
 * `TypeOrmModule.forFeature` (see DatabaseModule). Like app.module.ts, this file sits at the root
 * because it names every feature; entities.spec.ts fails when an entity file is missing here.
 */
export const ENTITIES: EntityClass[] = [
  UserEntity,
  RevokedTokenEntity,
  SiteEntity,
  CredentialEntity,
  OAuthStateEntity,
  McpOAuthClientEntity,
  AgentEntity,
  RunEntity,
  RunArchiveEntity,
  RunToolSetEntity,
  ChatSessionEntity,
  ChatMessageEntity,
  WorkspaceEntity,
  WorkspaceMemberEntity,
  WorkspaceInvitationEntity,
  BillingCustomerEntity,
  CreditPurchaseEntity,
  BillingEventEntity,
  TierOverrideEntity,
  WebhookDeliveryEntity,
  McpAuthorizationStateEntity,
  ConnectedAppEntity,
  ApprovalEntity,
];
