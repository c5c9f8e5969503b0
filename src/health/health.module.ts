import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';

/** GET /health: the database and Temporal, each checked (both are global providers). */
@Module({
  controllers: [HealthController],
})
export class HealthModule {}
