import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsString, MaxLength, MinLength } from 'class-validator';
import { Optional } from '../../common/optional.js';

export const MIN_PASSWORD_LENGTH = 12;

export class RegisterDto {
  @ApiProperty({ example: 'ada@example.com', format: 'email', maxLength: 320 })
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email: string;

  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 })
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(1024)
  password: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @Optional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class LoginDto {
  @ApiProperty({ maxLength: 320 })
  @IsString()
  @MaxLength(320)
  email: string;

  @ApiProperty({ maxLength: 1024 })
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class AcceptTermsDto {
  @ApiPropertyOptional({ description: 'The version of the terms the user accepted', maxLength: 64 })
  @Optional()
  @IsString()
  @MaxLength(64)
  version?: string;
}
