import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';

export const ASSIGNABLE_ROLES = ['admin', 'member', 'viewer'] as const;
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

export class CreateWorkspaceDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;
}

export class AddMemberDto {
  @ApiProperty({ format: 'email', maxLength: 320 })
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email: string;

  @ApiProperty({ enum: ASSIGNABLE_ROLES })
  @IsIn(ASSIGNABLE_ROLES)
  role: AssignableRole;
}

export class ChangeRoleDto {
  @ApiProperty({ enum: ASSIGNABLE_ROLES })
  @IsIn(ASSIGNABLE_ROLES)
  role: AssignableRole;
}

export class TransferOwnershipDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  userId: string;
}
