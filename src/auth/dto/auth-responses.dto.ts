import { ApiProperty } from '@nestjs/swagger';
import { UserResponseDto } from '../../users/dto/user-response.dto.js';
import type { SessionAnswer } from '../auth.service.js';

/** The answer of register and login: the user and a fresh access token. */
export class SessionResponseDto implements SessionAnswer {
  @ApiProperty({ type: UserResponseDto })
  user!: UserResponseDto;

  @ApiProperty({ description: 'A JWT: send it as `Authorization: Bearer <token>`' })
  accessToken!: string;

  @ApiProperty({ type: 'integer', description: 'Seconds until the token expires (JWT_TTL_SECONDS)' })
  expiresIn!: number;
}

export class AcceptTermsResponseDto {
  @ApiProperty({ format: 'date-time' })
  acceptedTermsAt!: string;
}

/**
 * The answer of the console's sign-in and registration: the user, without the token, which is in
 * the HttpOnly session cookie set with it.
 */
export class ConsoleSessionResponseDto {
  @ApiProperty({ type: UserResponseDto })
  user!: UserResponseDto;

  @ApiProperty({ type: 'integer', description: 'Seconds until the session (its token) expires (JWT_TTL_SECONDS)' })
  expiresIn!: number;
}
