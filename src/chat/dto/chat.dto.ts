import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';

export class SessionSiteDto {
  @ApiProperty()
  @IsUUID('all')
  siteId: string;

  @ApiPropertyOptional({ type: [String], description: 'Tools of the site the chat may use (default: all)' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  tools?: string[];
}

export class CreateSessionDto {
  @ApiProperty({ type: [SessionSiteDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => SessionSiteDto)
  sites: SessionSiteDto[];

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;
}

export class SendMessageDto {
  @ApiProperty({ maxLength: 100_000 })
  @IsString()
  @MinLength(1)
  @MaxLength(100_000)
  content: string;
}
