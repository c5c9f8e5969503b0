import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsDateString, IsObject, IsString, MaxLength, MinLength } from 'class-validator';
import { Optional } from '../../common/optional.js';

export class AddSiteDto {
  @ApiProperty({ example: 'https://notes.example.com', description: "The site's https:// address", maxLength: 2048 })
  @IsString()
  @MaxLength(2048)
  url: string;
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

export class OAuthStartDto {
  @ApiPropertyOptional({
    type: [String],
    description: 'Tools the connection is for (default: all); scopes are the least they need',
    maxItems: 200,
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  tools?: string[];
}

export class ToolCallDto {
  @ApiProperty({ type: 'object', additionalProperties: true, description: "Input matching the tool's input_schema" })
  @IsObject()
  input: Record<string, unknown>;
}
