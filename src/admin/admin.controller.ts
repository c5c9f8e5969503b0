import { Body, Controller, Get, Param, ParseUUIDPipe, Patch, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { Optional } from '../common/optional.js';
import { AdminOnly } from '../auth/decorators.js';
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
import { UserPageDto, UserResponseDto } from '../users/dto/user-response.dto.js';
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
  constructor(private readonly users: UsersService) {}

  @Get()
  @ApiOperation({ summary: 'List users (admins only)' })
  @ApiOkResponse({ type: UserPageDto })
  list(@Query() query: ListQueryDto): Promise<UserPageDto> {
    return this.users.list(pageQuery(query));
  }

  @Patch(':id')
  @ApiOperation({ summary: "Change a user's tier, credits, subscription status or role (admins only)" })
  @ApiOkResponse({ type: UserResponseDto })
  @ApiErrors('NOT_FOUND')
  patch(@Param('id', userIdPipe()) id: string, @Body() body: AdminUserPatchDto): Promise<UserResponseDto> {
    return this.users.patch(id, body);
  }
}
