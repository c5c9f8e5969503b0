import { ApiProperty } from '@nestjs/swagger';
import { NOT_READY_REASONS, type NotReadyReason } from '../readiness.service.js';

/** GET /api/health/live: the process runs and answers; nothing about its dependencies. */
export class LivenessDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

/** GET /api/health/ready: ready, or not with generic reasons (the details are in the log). */
export class ReadinessDto {
  @ApiProperty({ enum: ['ready', 'not_ready'] })
  status!: 'ready' | 'not_ready';

  @ApiProperty({
    enum: NOT_READY_REASONS,
    enumName: 'NotReadyReason',
    isArray: true,
    description: 'Empty when ready',
  })
  reasons!: NotReadyReason[];
}
