import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, MaxLength } from 'class-validator';
import { Optional } from '../../common/optional.js';

/** An access token's shape: a compact JWS (three base64url parts). */
export const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The sign-in form: an admin's API access token (or send it as `Authorization: Bearer`). */
export class CodecSessionDto {
  @ApiPropertyOptional({
    description: 'An admin access token (from POST /api/auth/login), when not sent as Authorization: Bearer',
    maxLength: 4096,
    pattern: JWT_SHAPE.source,
  })
  @Optional()
  @IsString()
  @MaxLength(4096)
  @Matches(JWT_SHAPE, { message: 'token must be an access token (a JWT)' })
  token?: string;
}
