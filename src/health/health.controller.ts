import { Controller, Get, Inject, Logger, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Connection } from '@temporalio/client';
import type { ApiReply, ApiRequest } from '../common/http.js';
import { type DataSource } from 'typeorm';
import { Public } from '../auth/decorators.js';
import { ApiErrors } from '../common/api-errors.js';
import { correlationIdOf } from '../common/correlation.js';
import { CountWhileStoreUp, NoRateLimit } from '../common/rate-limit.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { TEMPORAL_CONNECTION } from '../temporal/temporal.module.js';
import { HealthReportDto } from './dto/health-report.dto.js';
import { LivenessDto, ReadinessDto } from './dto/probe.dto.js';
import { ReadinessService } from './readiness.service.js';
import { pingDatabase } from './database-ping.repository.js';

const CHECK_TIMEOUT_MS = 2_000;

/**
 * How long one check's report answers every GET /api/health: the route is public, and each check is
 * a query and two Temporal calls, so a flood of it costs at most one check a second per process.
 */
export const HEALTH_CACHE_MS = 1_000;

interface ComponentHealth {
  status: 'up' | 'down';
  latencyMs: number;
  error?: string;
  [key: string]: unknown;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  database: ComponentHealth;
  temporal: ComponentHealth;
}

/**
 * The last check: its report (requests that arrive while it runs wait for it) and when it ended; its
 * report answers until HEALTH_CACHE_MS after that.
 */
interface HealthCheck {
  report: Promise<HealthReport>;
  doneMs: number | undefined;
}

/** A health check that did not answer within CHECK_TIMEOUT_MS: the component is reported down. */
class CheckTimeoutError extends Error {
  override readonly name = 'CheckTimeoutError';

  constructor() {
    super(`no answer within ${CHECK_TIMEOUT_MS} ms`);
  }
}

/**
 * Runs one check. The route is public: a failure answers only `publicError` (a driver's message names
 * hosts, ports, users and databases); the real error goes to the log with the request's correlation id.
 */
async function timed(
  check: () => Promise<Record<string, unknown> | void>,
  publicError: string,
  logDown: (detail: string) => void,
): Promise<ComponentHealth> {
  const started = performance.now();
  try {
    const extra = await Promise.race([
      check(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new CheckTimeoutError()), CHECK_TIMEOUT_MS).unref()),
    ]);
    return { status: 'up', latencyMs: Math.round(performance.now() - started), ...(extra ?? {}) };
  } catch (err) {
    logDown(err instanceof Error ? err.message : String(err));
    return { status: 'down', latencyMs: Math.round(performance.now() - started), error: publicError };
  }
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');
  private cached: HealthCheck | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(TEMPORAL_CONNECTION) private readonly temporal: Connection,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly readiness: ReadinessService,
  ) {}

  @Public()
  @NoRateLimit()
  @Get('live')
  @ApiOperation({ summary: 'Liveness: 200 while the process runs (checks nothing else; for restarts)' })
  @ApiOkResponse({ type: LivenessDto })
  @ApiErrors('VALIDATION_ERROR')
  live(): LivenessDto {
    return { status: 'ok' };
  }

  @Public()
  @NoRateLimit()
  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: 200 when PostgreSQL and Temporal answer and a worker polls the task queue, else 503',
    description:
      'A worker counts when Temporal saw it poll both the workflow and the activity side of the task queue ' +
      'within the last two minutes. The reasons are generic; the log has the details.',
  })
  @ApiOkResponse({ type: ReadinessDto, description: 'Ready (`reasons` empty)' })
  @ApiServiceUnavailableResponse({ type: ReadinessDto, description: 'Not ready, with the reasons' })
  @ApiErrors('VALIDATION_ERROR')
  async ready(@Req() req: ApiRequest, @Res({ passthrough: true }) res: ApiReply): Promise<ReadinessDto> {
    const reasons = await this.readiness.notReady({
      onDown: (component, detail) =>
        this.logger.warn(`${correlationIdOf(req)} readiness: ${component} is down: ${detail}`),
    });
    void res.code(reasons.length === 0 ? 200 : 503);
    return { status: reasons.length === 0 ? 'ready' : 'not_ready', reasons };
  }

  @Public()
  @CountWhileStoreUp()
  @Get()
  @ApiOperation({
    summary: 'Status of the database and of Temporal (503 when either is down)',
    description:
      'Counted against the per-address limit (the probes /api/health/live and /ready are not). The report is ' +
      `checked at most once every ${HEALTH_CACHE_MS} ms per API process; answers in between repeat it.`,
  })
  @ApiOkResponse({ type: HealthReportDto, description: 'Both are up' })
  @ApiServiceUnavailableResponse({
    type: HealthReportDto,
    description: 'The database or Temporal is down (`degraded`)',
  })
  @ApiErrors('VALIDATION_ERROR', 'RATE_LIMITED')
  async health(@Req() req: ApiRequest, @Res({ passthrough: true }) res: ApiReply): Promise<HealthReport> {
    const cached = this.cached;
    if (cached === undefined || (cached.doneMs !== undefined && Date.now() - cached.doneMs >= HEALTH_CACHE_MS)) {
      // The log lines of a failed check name the request that ran it.
      const entry: HealthCheck = { report: this.check(correlationIdOf(req)), doneMs: undefined };
      void entry.report.finally(() => (entry.doneMs = Date.now()));
      this.cached = entry;
    }
    const report = await this.cached!.report;
    void res.code(report.status === 'ok' ? 200 : 503);
    return report;
  }

  /** One check of both dependencies (never rejects: a failed check is a component reported down). */
  private async check(correlationId: string): Promise<HealthReport> {
    const down = (component: string) => (detail: string) =>
      this.logger.warn(`${correlationId} health: ${component} is down: ${detail}`);
    const [database, temporal] = await Promise.all([
      timed(
        async () => {
          await pingDatabase(this.dataSource);
        },
        'database unavailable',
        down('the database'),
      ),
      timed(
        async () => {
          // No connection.withDeadline here: its AsyncLocalStorage switches on Node 20's promise hooks for
          // the whole process from the first health probe on, after which every promise of every request
          // costs about 2.7 times as much (measured here). `timed` bounds the wait, and gRPC keepalive
          // ends a call on a dead connection.
          await this.temporal.healthService.check({});
          const queue = await this.temporal.workflowService.describeTaskQueue({
            namespace: this.settings.temporalNamespace,
            taskQueue: { name: this.settings.temporalTaskQueue },
            taskQueueType: 1, // workflow tasks
          });
          return { namespace: this.settings.temporalNamespace, workerPollers: queue.pollers?.length ?? 0 };
        },
        'temporal unavailable',
        down('Temporal'),
      ),
    ]);
    return {
      status: database.status === 'up' && temporal.status === 'up' ? 'ok' : 'degraded',
      database,
      temporal,
    };
  }
}
