import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString } from 'class-validator';
import { Optional } from '../../common/optional.js';

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
