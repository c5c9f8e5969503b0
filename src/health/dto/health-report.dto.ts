import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

const STATUSES = ['up', 'down'] as const;

/** One dependency's check; a component that is down says only a generic `error` (the route is public). */
export class ComponentHealthDto {
  @ApiProperty({ enum: STATUSES })
  status!: (typeof STATUSES)[number];

  @ApiProperty({ type: 'integer', minimum: 0 })
  latencyMs!: number;

  @ApiPropertyOptional({ description: 'Only when down: what is unavailable', example: 'database unavailable' })
  error?: string;
}

/** Temporal's check, with its namespace and the workers polling the task queue when it is up. */
export class TemporalHealthDto extends ComponentHealthDto {
  @ApiPropertyOptional({ description: 'Only when up' })
  namespace?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Only when up: workers polling the task queue' })
  workerPollers?: number;
}

export class HealthReportDto {
  @ApiProperty({ enum: ['ok', 'degraded'] })
  status!: 'ok' | 'degraded';

  @ApiProperty({ type: ComponentHealthDto })
  database!: ComponentHealthDto;

  @ApiProperty({ type: TemporalHealthDto })
  temporal!: TemporalHealthDto;
}
