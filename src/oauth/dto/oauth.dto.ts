import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, Matches, ValidateIf } from 'class-validator';

// An optional field may be absent, never null: `@IsOptional()` would let null through.
const present = (_: object, value: unknown): boolean => value !== undefined;

/** What the site's redirect brought to the callback, handed back by the user who started the flow. */
export class OAuthCompleteDto {
  @ApiPropertyOptional({
    description: 'The `code` of the callback (required unless `error` is given)',
    minLength: 1,
    maxLength: 4096,
  })
  @ValidateIf((dto: OAuthCompleteDto, value: unknown) => value !== undefined || dto.error === undefined)
  @IsString()
  @Length(1, 4096)
  code?: string;

  @ApiProperty({ description: 'The `state` of the callback', minLength: 1, maxLength: 512 })
  @IsString()
  @Length(1, 512)
  state: string;

  @ApiPropertyOptional({
    description: 'The `iss` of the callback, when the site sent one (RFC 9207)',
    minLength: 1,
    maxLength: 2048,
  })
  @ValidateIf(present)
  @IsString()
  @Length(1, 2048)
  iss?: string;

  @ApiPropertyOptional({
    description: 'The `error` of the callback when the site refused (e.g. access_denied)',
    minLength: 1,
    maxLength: 256,
    pattern: '^[\\x20-\\x21\\x23-\\x5B\\x5D-\\x7E]+$',
  })
  @ValidateIf(present)
  @IsString()
  @Length(1, 256)
  // RFC 6749 §4.1.2.1: printable ASCII without `"` and `\`.
  @Matches(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/)
  error?: string;
}
