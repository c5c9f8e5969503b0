import { ApiProperty } from '@nestjs/swagger';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus, TIERS, type Tier } from '../../users/user-fields.js';
import { LEDGER_REASONS, type LedgerEntry, type LedgerReason, type TierChange } from '../../credits/ledger-entry.js';
import type { BillingResponse, PurchaseResult, PurchaseSummary, TierPlan } from '../billing-views.js';
import { PURCHASE_STATUSES, type PurchaseStatus } from '../billing.entities.js';
import { PAYMENT_PROVIDERS, type PaymentProviderName } from '../../config/settings.js';
import type { TierLimits } from '../tiers.js';

/** The limits of the user's tier in force (TIER_LIMITS; a past-due subscription has the free tier's). */
export class TierLimitsDto implements TierLimits {
  @ApiProperty({ type: 'integer', description: 'Sites the vault may hold (VAULT_LIMIT_REACHED past it)' })
  vaultSites!: number;

  @ApiProperty({ type: 'integer', description: 'Agents the user may have (AGENT_LIMIT_REACHED past it)' })
  agents!: number;

  @ApiProperty({ description: 'Whether agents may run on a cron schedule' })
  scheduledAgents!: boolean;

  @ApiProperty({ description: 'Whether agents may be triggered by webhooks' })
  webhookAgents!: boolean;

  @ApiProperty({ type: 'integer', description: 'Team workspaces the user may own (0: none)' })
  workspaces!: number;

  @ApiProperty({ type: 'integer', description: 'Members a workspace of this owner may have' })
  workspaceMembers!: number;

  @ApiProperty({ type: 'integer', description: 'Monthly price, in cents' })
  priceCents!: number;
}

/** One tier with its limits and monthly price (every tier is listed in BillingResponseDto.plans). */
export class TierPlanDto extends TierLimitsDto implements TierPlan {
  @ApiProperty({ enum: TIERS, enumName: 'Tier' })
  tier!: Tier;
}

export interface PaymentMethodSummary {
  brand: string;
  last4: string;
}

/** GET /api/billing and the answers of the routes that change it. */
export class BillingResponseDto implements BillingResponse {
  @ApiProperty({ enum: TIERS, enumName: 'Tier' })
  tier!: Tier;

  @ApiProperty({ type: 'integer', description: 'The credit balance (1 credit = 1 cent)' })
  credits!: number;

  @ApiProperty({ enum: SUBSCRIPTION_STATUSES, enumName: 'SubscriptionStatus' })
  subscriptionStatus!: SubscriptionStatus;

  // Inline, not a $ref: OpenAPI 3.0 validators read `nullable` only beside a `type`.
  @ApiProperty({
    type: 'object',
    nullable: true,
    description: 'null until one is stored',
    properties: {
      brand: { type: 'string', example: 'visa' },
      last4: { type: 'string', example: '4242', description: 'The last four digits of the card' },
    },
    required: ['brand', 'last4'],
    // Without it the array above is taken for this property's own flag, and the document would let it be left out.
    selfRequired: true,
  })
  paymentMethod!: PaymentMethodSummary | null;

  @ApiProperty({ type: TierLimitsDto })
  limits!: TierLimitsDto;

  @ApiProperty({
    type: [TierPlanDto],
    description:
      'Every tier with its limits and monthly price, lowest first (free, pro, harness, team): what a change of plan gives or takes away',
  })
  plans!: TierPlanDto[];

  @ApiProperty({
    enum: PAYMENT_PROVIDERS,
    enumName: 'PaymentProviderName',
    description: 'Who takes payments here: none (payments refused), test (test card tokens) or stripe',
  })
  provider!: PaymentProviderName;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'pk_live_…',
    description: "Stripe's publishable key, for Stripe.js's card field; null when the server has none",
  })
  publishableKey!: string | null;
}

/** One credit purchase. */
export class PurchaseDto implements PurchaseSummary {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: 'integer', description: 'Credits bought' })
  credits!: number;

  @ApiProperty({ type: 'integer', description: 'The charge, in cents' })
  amountCents!: number;

  @ApiProperty({
    enum: PURCHASE_STATUSES,
    enumName: 'PurchaseStatus',
    description:
      'pending: charged, waiting for the provider to confirm (the credits come then); succeeded: the credits were added; failed: declined, nothing added',
  })
  status!: PurchaseStatus;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it succeeded or failed' })
  settledAt!: string | null;
}

/** POST /api/billing/credits/purchase. */
export class PurchaseResultDto implements PurchaseResult {
  @ApiProperty({
    type: 'integer',
    description: 'The credit balance now (with the credits when the purchase succeeded; without them while pending)',
  })
  credits!: number;

  @ApiProperty({ type: PurchaseDto })
  purchase!: PurchaseDto;
}

/** A page of the caller's purchases, newest first. */
export class PurchasePageDto {
  @ApiProperty({ type: [PurchaseDto] })
  items!: PurchaseDto[];

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Pass as `cursor` for the next (older) page; null on the last',
  })
  nextCursor!: string | null;
}

/** POST /api/billing/setup-intent. */
export class SetupIntentDto {
  @ApiProperty({ description: "The SetupIntent's client secret, for Stripe.js's confirmCardSetup" })
  clientSecret!: string;
}

/** POST /api/billing/webhooks/stripe. */
export class EventReceiptDto {
  @ApiProperty({ enum: [true] })
  received!: true;

  @ApiProperty({ description: 'True when the event had been applied before: nothing changed' })
  duplicate!: boolean;
}

/** One movement of the balance (GET /api/billing/ledger). */
export class LedgerEntryDto implements LedgerEntry {
  @ApiProperty({ description: 'The entry id (entries are numbered in the order they happened)', example: '42' })
  id!: string;

  @ApiProperty({ type: 'integer', description: 'Credits added (positive) or taken (negative)', example: -2 })
  amount!: number;

  @ApiProperty({
    enum: LEDGER_REASONS,
    enumName: 'LedgerReason',
    description:
      'signup_grant: the credits a new account starts with; purchase: bought credits; model_turn: an agent run’s model turn; chat_turn: a chat reply’s model turn; admin_adjustment: set by an admin; tier_change: an admin changed the tier (amount 0, see tierChange)',
  })
  reason!: LedgerReason;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'The balance right after this entry' })
  balanceAfter!: number;

  @ApiProperty({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'The run charged (model_turn); else null',
  })
  runId!: string | null;

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { from: { type: 'string', enum: [...TIERS] }, to: { type: 'string', enum: [...TIERS] } },
    required: ['from', 'to'],
    selfRequired: true,
    description: 'The tiers of a tier_change (from, to); else null',
  })
  tierChange!: TierChange | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

/** A page of the caller's ledger, newest first. */
export class LedgerPageDto {
  @ApiProperty({ type: [LedgerEntryDto] })
  items!: LedgerEntryDto[];

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Pass as `cursor` for the next (older) page; null on the last',
  })
  nextCursor!: string | null;
}
