import { ApiProperty } from '@nestjs/swagger';
import { anyJson } from '../../common/api-schemas.js';
import type { ToolCallResult } from '../tool-caller.js';

/** A tool's answer: its JSON result as the site sent it. */
export class ToolCallResponseDto implements Omit<ToolCallResult, 'refreshed'> {
  @ApiProperty(anyJson("The site's JSON result (an MCP server's: {content, structuredContent?} as it sent them)"))
  result: unknown;

  @ApiProperty({ description: 'How long the call took, in milliseconds' })
  durationMs: number;
}
