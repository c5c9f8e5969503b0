import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';

export const MIN_PASSWORD_LENGTH = 12;

export class RegisterDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email: string;

  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 })
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(1024)
  password: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class LoginDto {
  @ApiProperty()
  @IsString()
  @MaxLength(320)
  email: string;

  @ApiProperty()
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class AcceptTermsDto {
  @ApiPropertyOptional({ description: 'The version of the terms the user accepted', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  version?: string;
}
