import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDateString, IsIn, IsString, MaxLength, MinLength } from 'class-validator';
import { SITE_PROTOCOLS, type SiteProtocol } from '../../sites/mcp-state.js';
import { Optional } from '../../common/optional.js';

export class AddSiteDto {
  @ApiProperty({ example: 'https://notes.example.com', description: "The site's https:// address", maxLength: 2048 })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiPropertyOptional({
    enum: SITE_PROTOCOLS,
    description: 'agentsite or mcp; left out: the agentsite manifest is looked for first, then an MCP server at url',
  })
  @Optional()
  @IsIn(SITE_PROTOCOLS)
  protocol?: SiteProtocol;
}

export class StoreTokenDto {
  @ApiProperty({
    description: 'The API token the user generated on the site (never returned)',
    minLength: 1,
    maxLength: 8192,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  token: string;

  @ApiPropertyOptional({
    description: 'When the token expires (ISO-8601)',
    example: '2027-01-01T00:00:00Z',
    format: 'date-time',
  })
  @Optional()
  @IsDateString({ strict: true })
  expiresAt?: string;
}
