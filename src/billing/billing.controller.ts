import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/decorators.js';
import { type SubscriptionStatus, type Tier } from '../users/user.entity.js';
import { TIER_LIMITS, type TierLimits } from './tiers.js';

export interface BillingResponse {
  tier: Tier;
  credits: number;
  subscriptionStatus: SubscriptionStatus;
  paymentMethod: { brand: string; last4: string } | null;
  limits: TierLimits;
}

@ApiTags('billing')
@ApiBearerAuth()
@Controller('billing')
export class BillingController {
  @Get()
  @ApiOperation({ summary: 'Tier, credits, subscription status, payment method and the tier limits' })
  billing(@CurrentUser() auth: AuthUser): BillingResponse {
    const { user } = auth;
    return {
      tier: user.tier,
      credits: user.credits,
      subscriptionStatus: user.subscriptionStatus,
      paymentMethod: null,
      limits: TIER_LIMITS[user.tier],
    };
  }
}
