import { Body, Controller, Delete, Get, Param, ParseUUIDPipe, Patch, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { Optional } from '../common/optional.js';
import type { AuthUser } from '../auth/auth-user.js';
import { AdminOnly, CurrentUser } from '../auth/decorators.js';
import { TierOverrideService } from '../billing/tier-override.service.js';
import { AppError } from '../common/app-error.js';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { ListQueryDto, pageQuery } from '../common/pagination.js';
import {
  ROLES,
  type Role,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
  TIERS,
  type Tier,
} from '../users/user-fields.js';
import { AdminUserDto, AdminUserPageDto } from './dto/admin-user.dto.js';
import { UsersService } from '../users/users.service.js';

export class AdminUserPatchDto {
  @ApiPropertyOptional({ enum: TIERS })
  @Optional()
  @IsIn(TIERS)
  tier?: Tier;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The new credit balance',
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  credits?: number;

  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES })
  @Optional()
  @IsIn(SUBSCRIPTION_STATUSES)
  subscriptionStatus?: SubscriptionStatus;

  @ApiPropertyOptional({ enum: ROLES })
  @Optional()
  @IsIn(ROLES)
  role?: Role;
}

/** A user id that is not a UUID names no user. */
function userIdPipe(): ParseUUIDPipe {
  return new ParseUUIDPipe({ exceptionFactory: () => new AppError('NOT_FOUND', 'No user with this id') });
}

@ApiTags('admin')
@ApiBearerAuth()
@AdminOnly()
@ApiErrors(...AUTH_ERRORS, 'ADMIN_REQUIRED', 'VALIDATION_ERROR')
@Controller('admin/users')
export class AdminController {
  constructor(
    private readonly users: UsersService,
    private readonly overrides: TierOverrideService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List users with their plan at the payment provider (admins only)' })
  @ApiOkResponse({ type: AdminUserPageDto })
  async list(@Query() query: ListQueryDto): Promise<AdminUserPageDto> {
    const page = await this.users.list(pageQuery(query));
    const plans = await this.overrides.adminPlans(page.items.map((u) => u.id));
    return { ...page, items: page.items.map((u) => ({ ...u, plan: plans.get(u.id)! })) };
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      "Change a user's tier, credits, subscription status or role (admins only); a tier change is an override that the subscription's later events do not undo",
  })
  @ApiOkResponse({ type: AdminUserDto })
  @ApiErrors('NOT_FOUND')
  async patch(
    @CurrentUser() auth: AuthUser,
    @Param('id', userIdPipe()) id: string,
    @Body() body: AdminUserPatchDto,
  ): Promise<AdminUserDto> {
    const { tier, ...rest } = body;
    await this.users.patch(id, rest);
    if (tier !== undefined) {
      await this.overrides.setByAdmin(auth.user.id, id, tier);
    }
    return this.view(id);
  }

  @Delete(':id/tier-override')
  @ApiOperation({
    summary: "Clear an admin's tier override: the tier returns to the subscription's (free without one) (admins only)",
  })
  @ApiOkResponse({ type: AdminUserDto })
  @ApiErrors('NOT_FOUND')
  async clearOverride(@CurrentUser() auth: AuthUser, @Param('id', userIdPipe()) id: string): Promise<AdminUserDto> {
    await this.users.findOrFail(id);
    await this.overrides.clearByAdmin(auth.user.id, id);
    return this.view(id);
  }

  private async view(id: string): Promise<AdminUserDto> {
    const user = this.users.toResponse(await this.users.findOrFail(id));
    return { ...user, plan: (await this.overrides.adminPlans([id])).get(id)! };
  }
}
