import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Optional } from '../../common/optional.js';

export class StartRunDto {
  @ApiPropertyOptional({ description: 'What to ask the agent for this run', maxLength: 50_000 })
  @Optional()
  @IsString()
  @MaxLength(50_000)
  input?: string;
}
