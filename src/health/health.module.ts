import { Module } from '@nestjs/common';
import { AboutController } from './about.controller.js';
import { HealthController } from './health.controller.js';
import { ReadinessService } from './readiness.service.js';

/**
 * GET /health (the database and Temporal, each checked: both are global providers), /health/live and
 * /health/ready; ReadinessService also answers the worker's own /health/ready. GET /about: the console's public facts.
 */
@Module({
  controllers: [HealthController, AboutController],
  providers: [ReadinessService],
  exports: [ReadinessService],
})
export class HealthModule {}
