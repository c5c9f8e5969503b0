import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/decorators.js';
import { OperatorGuard } from '../auth/operator.guard.js';
import { ApiErrors } from '../common/api-errors.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus's text exposition format, the only one served. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** GET /api/metrics: this API process's metrics, for Prometheus (the worker serves its own). */
@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  // Public to the global JWT guard, so that METRICS_TOKEN (not a JWT) gets through it; OperatorGuard
  // then takes that token or an admin's JWT.
  @Public()
  @UseGuards(OperatorGuard)
  @Get()
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  @ApiBearerAuth()
  @ApiOperation({
    summary: "This API process's metrics in Prometheus text format (operators)",
    description:
      '`Authorization: Bearer <METRICS_TOKEN>` (a scraper) or an admin’s access token. Counters count what ' +
      'happened in this process: sum them over every API and worker instance (the worker serves its own on ' +
      'WORKER_HTTP_PORT, with the Temporal SDK’s metrics).',
  })
  @ApiOkResponse({
    description: 'Prometheus text format 0.0.4',
    content: {
      'text/plain': { schema: { type: 'string', example: 'agentsite_runs_started_total{trigger="manual"} 3' } },
    },
  })
  @ApiErrors(
    'UNAUTHORIZED',
    'INVALID_TOKEN',
    'TOKEN_EXPIRED',
    'TOKEN_REVOKED',
    'ADMIN_REQUIRED',
    'RATE_LIMITED',
    'VALIDATION_ERROR',
  )
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
