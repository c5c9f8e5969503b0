import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Optional } from '../../common/optional.js';

/** The sign-in form: an admin's API access token (or send it as `Authorization: Bearer`). */
export class CodecSessionDto {
  @ApiPropertyOptional({
    description: 'An admin access token (from POST /api/auth/login), when not sent as Authorization: Bearer',
    maxLength: 4096,
  })
  @Optional()
  @IsString()
  @MaxLength(4096)
  token?: string;
}
