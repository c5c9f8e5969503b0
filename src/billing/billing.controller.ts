import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser, TermsRequired } from '../auth/decorators.js';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { TIERS, type Tier } from '../users/user-fields.js';
import { DEFAULT_PAGE_SIZE, ListQueryDto, pageQuery } from '../common/pagination.js';
import { LedgerQueryDto } from './dto/ledger-query.dto.js';
import {
  BillingResponseDto,
  LedgerPageDto,
  PurchasePageDto,
  PurchaseResultDto,
  SetupIntentDto,
} from './dto/billing-responses.dto.js';
import { BillingService } from './billing.service.js';

export class PaymentMethodDto {
  @ApiProperty({
    example: 'tok_visa',
    description:
      "The card from the payment provider's client: with Stripe a PaymentMethod id (pm_…, from Stripe.js or a confirmed SetupIntent) or a card token (tok_…); with the test provider tok_visa or tok_chargeDeclined",
    maxLength: 200,
  })
  @IsString()
  @MaxLength(200)
  paymentMethodToken: string;
}

export class PurchaseCreditsDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    description: "Credits to buy (1 credit = 1 cent); with Stripe at least 50, Stripe's smallest charge",
  })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  amount: number;
}

export class SubscriptionDto {
  @ApiProperty({ enum: TIERS })
  @IsIn(TIERS)
  tier: Tier;
}

@ApiTags('billing')
@ApiBearerAuth()
@TermsRequired()
@ApiErrors(...AUTH_ERRORS, 'TERMS_NOT_ACCEPTED', 'VALIDATION_ERROR')
@Controller('billing')
export class BillingController {
  constructor(private readonly billing: BillingService) {}

  @Get()
  @ApiOperation({ summary: 'Tier, credits, subscription status, payment method and the limits in force' })
  @ApiOkResponse({ type: BillingResponseDto })
  async describe(@CurrentUser() auth: AuthUser): Promise<BillingResponseDto> {
    await this.billing.reconcile(auth.user.id);
    return this.billing.describe(auth.user.id);
  }

  @Get('ledger')
  @ApiOperation({
    summary: 'Your credit ledger, newest first: every grant, purchase, charge and admin adjustment of your balance',
  })
  @ApiOkResponse({ type: LedgerPageDto })
  @ApiErrors('VALIDATION_ERROR')
  ledger(@CurrentUser() auth: AuthUser, @Query() query: LedgerQueryDto): Promise<LedgerPageDto> {
    return this.billing.ledger(auth.user.id, query.limit ?? DEFAULT_PAGE_SIZE, query.cursor);
  }

  @Get('purchases')
  @ApiOperation({
    summary:
      'Your credit purchases, newest first, each pending, succeeded or failed (one pending for over two minutes is looked up at the provider first)',
  })
  @ApiOkResponse({ type: PurchasePageDto })
  @ApiErrors('VALIDATION_ERROR')
  async purchases(@CurrentUser() auth: AuthUser, @Query() query: ListQueryDto): Promise<PurchasePageDto> {
    const page = pageQuery(query);
    await this.billing.reconcile(auth.user.id);
    return this.billing.purchases(auth.user.id, page);
  }

  @Post('setup-intent')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      "A Stripe SetupIntent's client secret for the card field; confirm it with Stripe.js, then store its payment method (PAYMENT_FAILED unless the provider is Stripe)",
  })
  @ApiOkResponse({ type: SetupIntentDto })
  @ApiErrors('PAYMENT_FAILED')
  setupIntent(@CurrentUser() auth: AuthUser): Promise<SetupIntentDto> {
    return this.billing.setupIntent(auth.user.id);
  }

  @Post('payment-method')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Store a payment method (PAYMENT_FAILED when the server takes no payments)' })
  @ApiOkResponse({ type: BillingResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'PAYMENT_FAILED')
  paymentMethod(@CurrentUser() auth: AuthUser, @Body() body: PaymentMethodDto): Promise<BillingResponseDto> {
    return this.billing.setPaymentMethod(auth.user.id, body.paymentMethodToken);
  }

  @Post('credits/purchase')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Buy credits (NO_PAYMENT_METHOD, PAYMENT_FAILED): the purchase is succeeded (credits added) or pending (added when the provider confirms the payment)',
  })
  @ApiOkResponse({ type: PurchaseResultDto })
  @ApiErrors('VALIDATION_ERROR', 'NO_PAYMENT_METHOD', 'PAYMENT_FAILED')
  purchase(@CurrentUser() auth: AuthUser, @Body() body: PurchaseCreditsDto): Promise<PurchaseResultDto> {
    return this.billing.purchaseCredits(auth.user.id, body.amount);
  }

  @Post('subscription')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Change the tier (NO_PAYMENT_METHOD, PAYMENT_FAILED)' })
  @ApiOkResponse({ type: BillingResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'NO_PAYMENT_METHOD', 'PAYMENT_FAILED')
  subscription(@CurrentUser() auth: AuthUser, @Body() body: SubscriptionDto): Promise<BillingResponseDto> {
    return this.billing.changeSubscription(auth.user.id, body.tier);
  }
}
