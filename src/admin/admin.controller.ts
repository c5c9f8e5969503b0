import { Body, Controller, Get, Param, ParseUUIDPipe, Patch, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { AdminOnly } from '../auth/decorators.js';
import { AppError } from '../common/app-error.js';
import { ListQueryDto, type Page, pageQuery } from '../common/pagination.js';
import {
  ROLES,
  type Role,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
  TIERS,
  type Tier,
} from '../users/user.entity.js';
import { type UserResponse, UsersService } from '../users/users.service.js';

export class AdminUserPatchDto {
  @ApiPropertyOptional({ enum: TIERS })
  @IsOptional()
  @IsIn(TIERS)
  tier?: Tier;

  @ApiPropertyOptional({ minimum: 0, description: 'The new credit balance' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  credits?: number;

  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES })
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES)
  subscriptionStatus?: SubscriptionStatus;

  @ApiPropertyOptional({ enum: ROLES })
  @IsOptional()
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
@Controller('admin/users')
export class AdminController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @ApiOperation({ summary: 'List users (admins only)' })
  list(@Query() query: ListQueryDto): Promise<Page<UserResponse>> {
    return this.users.list(pageQuery(query));
  }

  @Patch(':id')
  @ApiOperation({ summary: "Change a user's tier, credits, subscription status or role (admins only)" })
  patch(@Param('id', userIdPipe()) id: string, @Body() body: AdminUserPatchDto): Promise<UserResponse> {
    return this.users.patch(id, body);
  }
}
