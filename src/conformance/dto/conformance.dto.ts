import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { Optional } from '../../common/optional.js';

/**
 * The most tool calls one check through the API may make to provoke a 429 (the CLI has no such cap):
 * past the 60 a minute per token that the specification recommends to sites, so such a limit is seen.
 */
export const MAX_API_BURST = 70;

export class ConformanceCheckDto {
  @ApiProperty({
    example: 'https://notes.example.com',
    description: "The https:// address of a site in the caller's vault (or the X-Workspace-Id workspace's), as added",
    maxLength: 2048,
  })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiPropertyOptional({
    description:
      'A bearer token of a test account on the site, for the tool calls (used for this check only, never stored). ' +
      'Each tool is called once with a sample input: use a test account.',
    minLength: 1,
    maxLength: 8192,
  })
  @Optional()
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  token?: string;

  @ApiPropertyOptional({
    description: `Calls at most to provoke a 429 (default and maximum ${MAX_API_BURST}; each takes an outgoing slot)`,
    minimum: 1,
    maximum: MAX_API_BURST,
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_API_BURST)
  burst?: number;
}
