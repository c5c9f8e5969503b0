import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ConformanceReport, RuleResult, RuleStatus } from '../conformance-report.js';

export class RuleResultDto implements RuleResult {
  @ApiProperty({ example: 'tools.search_notes.unauthorized', description: 'Stable id of the rule' })
  id: string;

  @ApiProperty({ example: 'Refuses a call without a token: 401 JSON with `error`' })
  title: string;

  @ApiProperty({ enum: ['pass', 'fail', 'skipped'] })
  status: RuleStatus;

  @ApiProperty({ description: 'What was seen (pass), what is wrong (fail), or why the rule was not checked (skipped)' })
  message: string;

  @ApiPropertyOptional({ description: 'How to fix it (failures only)' })
  hint?: string;
}

export class RuleCountsDto {
  @ApiProperty()
  pass: number;

  @ApiProperty()
  fail: number;

  @ApiProperty()
  skipped: number;
}

export class ConformanceReportDto implements ConformanceReport {
  @ApiProperty({ description: 'The site checked (normalised)' })
  url: string;

  @ApiProperty({ format: 'date-time' })
  checkedAt: string;

  @ApiProperty({ description: 'True only when every rule passed (a skipped rule is not a pass)' })
  passed: boolean;

  @ApiProperty({ type: RuleCountsDto })
  counts: RuleCountsDto;

  @ApiProperty({ type: [RuleResultDto] })
  rules: RuleResultDto[];
}
