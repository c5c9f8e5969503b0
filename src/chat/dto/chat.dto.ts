import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { Optional } from '../../common/optional.js';

export class SessionSiteDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  siteId: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'Tools of the site the chat may use (default: all)',
    maxItems: 200,
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  tools?: string[];
}

export class CreateSessionDto {
  @ApiProperty({ type: [SessionSiteDto], minItems: 1, maxItems: 20 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => SessionSiteDto)
  sites: SessionSiteDto[];

  @ApiPropertyOptional({ maxLength: 200 })
  @Optional()
  @IsString()
  @MaxLength(200)
  title?: string;
}

export class SendMessageDto {
  @ApiProperty({ minLength: 1, maxLength: 100_000 })
  @IsString()
  @MinLength(1)
  @MaxLength(100_000)
  content: string;
}
