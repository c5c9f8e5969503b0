import { ApiProperty } from '@nestjs/swagger';
import type { AdminPlan, TierOverrideView } from '../../billing/tier-override.service.js';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus, TIERS, type Tier } from '../../users/user-fields.js';
import { UserResponseDto } from '../../users/dto/user-response.dto.js';

/** The user's plan at the payment provider next to the one in force. */
export class AdminPlanDto implements AdminPlan {
  @ApiProperty({
    enum: TIERS,
    enumName: 'Tier',
    nullable: true,
    description: "The tier the user's subscription sells at the payment provider; null without a subscription",
  })
  subscriptionTier!: Tier | null;

  @ApiProperty({
    enum: SUBSCRIPTION_STATUSES,
    enumName: 'SubscriptionStatus',
    nullable: true,
    description: "That subscription's status at the payment provider; null without a subscription",
  })
  providerStatus!: SubscriptionStatus | null;

  // Inline, not a $ref: a nullable $ref (allOf) would refuse the null that validators see.
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: {
      tier: { type: 'string', enum: [...TIERS] },
      setBy: { type: 'string', format: 'uuid', nullable: true, description: 'The admin who set it' },
      setAt: { type: 'string', format: 'date-time' },
      overridden: {
        type: 'object',
        nullable: true,
        properties: {
          at: { type: 'string', format: 'date-time', description: 'When the payment provider created the event' },
          tier: { type: 'string', enum: [...TIERS] },
          status: { type: 'string', enum: [...SUBSCRIPTION_STATUSES] },
        },
        required: ['at', 'tier', 'status'],
        description: 'The last subscription event the override held back (what it would have set); null when none came',
      },
    },
    required: ['tier', 'setBy', 'setAt', 'overridden'],
    selfRequired: true,
    description:
      "An admin's tier change, in force over the subscription's events until cleared or the plan changes; null when none holds",
  })
  override!: TierOverrideView | null;
}

/** A user as an admin sees it: the account, and its plan at the payment provider. */
export class AdminUserDto extends UserResponseDto {
  @ApiProperty({ type: AdminPlanDto })
  plan!: AdminPlanDto;
}

/** One page of users (GET /api/admin/users). */
export class AdminUserPageDto {
  @ApiProperty({ type: [AdminUserDto] })
  items!: AdminUserDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}
