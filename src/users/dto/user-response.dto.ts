import { ApiProperty } from '@nestjs/swagger';
import { ROLES, type Role, SUBSCRIPTION_STATUSES, type SubscriptionStatus, TIERS, type Tier } from '../user-fields.js';
import type { UserResponse } from '../users.service.js';

/** A user as the API answers it (UsersService.toResponse): /api/me, register, login, admin routes. */
export class UserResponseDto implements UserResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'ada@example.com' })
  email!: string;

  @ApiProperty({ type: 'string', nullable: true })
  name!: string | null;

  @ApiProperty({ enum: ROLES, enumName: 'UserRole' })
  role!: Role;

  @ApiProperty({ enum: TIERS, enumName: 'Tier' })
  tier!: Tier;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'The credit balance (1 credit = 1 cent)' })
  credits!: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'null until the terms are accepted',
  })
  acceptedTermsAt!: string | null;

  @ApiProperty({ enum: SUBSCRIPTION_STATUSES, enumName: 'SubscriptionStatus' })
  subscriptionStatus!: SubscriptionStatus;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

/** One page of users (GET /api/admin/users). */
export class UserPageDto {
  @ApiProperty({ type: [UserResponseDto] })
  items!: UserResponseDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor!: string | null;
}
