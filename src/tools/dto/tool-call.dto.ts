import { ApiProperty } from '@nestjs/swagger';
import { IsObject } from 'class-validator';

export class ToolCallDto {
  @ApiProperty({ type: 'object', additionalProperties: true, description: "Input matching the tool's input_schema" })
  @IsObject()
  input: Record<string, unknown>;
}
