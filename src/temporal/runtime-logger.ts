import type { Logger, LogLevel as TemporalLogLevel, LogMetadata } from '@temporalio/common';
import type { LogLevel } from '../config/settings.js';
import { formatLogLine, type LogLevelName } from '../common/log-format.js';
import { RUN_LOG_FIELD } from '../../workflows/contracts.js';
import { UUID } from '../common/ids.js';

/** Temporal's level names, lowest first. */
const SEVERITY: TemporalLogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** LOG_LEVEL → the lowest Temporal level written (Nest's `log` is Temporal's `INFO`). */
export const TEMPORAL_LEVELS: Record<LogLevel, TemporalLogLevel> = {
  error: 'ERROR',
  warn: 'WARN',
  log: 'INFO',
  debug: 'DEBUG',
};

const LEVEL_NAMES: Record<TemporalLogLevel, LogLevelName> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Symbol.for('log_timestamp'): where the SDK keeps a line's own time (nanoseconds) in its metadata. */
const LOG_TIMESTAMP = Symbol.for('log_timestamp');

/** Metadata the SDK attaches that is not written: the task token is a credential that completes the task. */
const DROPPED = new Set(['taskToken', 'sdkComponent']);

/** Our ids behind Temporal's workflow ids (see workflowIds in workflows/contracts.ts). */
const ID_PREFIXES: Array<[RegExp, 'runId' | 'agentId']> = [
  [/^agent-(.+)$/, 'agentId'],
  [/^scheduled-(.+)$/, 'agentId'],
];

/**
 * The fields of one SDK line. Temporal's `runId` is its workflow execution's run id: it becomes
 * `workflowRunId`, as the SDK already calls it on activity lines, so that `runId` is always ours. Our
 * run and agent ids are read from the workflow id where the line does not name them.
 */
export function temporalLogFields(meta: LogMetadata | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const workflowLine = meta !== undefined && meta.workflowRunId === undefined && meta.activityId === undefined;
  for (const [key, value] of Object.entries(meta ?? {})) {
    if (DROPPED.has(key)) {
      continue;
    }
    if (key === 'runId' && workflowLine) {
      fields.workflowRunId = value;
    } else if (key === RUN_LOG_FIELD) {
      // Our run id, named so by a workflow that runs runs in an execution of its own (the agent's queue).
      fields.runId = value;
    } else {
      fields[key] = value;
    }
  }
  const workflowId = fields.workflowId;
  if (typeof workflowId === 'string') {
    for (const [pattern, field] of ID_PREFIXES) {
      const id = pattern.exec(workflowId)?.[1];
      if (id !== undefined && UUID.test(id) && fields[field] === undefined) {
        fields[field] = id;
      }
    }
  }
  return fields;
}

function lineTime(meta: LogMetadata | undefined): Date {
  const nanos = meta?.[LOG_TIMESTAMP] as unknown;
  return typeof nanos === 'bigint' ? new Date(Number(nanos / 1_000_000n)) : new Date();
}

/**
 * The Temporal SDK's logger (Runtime.install({ logger })): the worker's own lines, the activity and
 * workflow context loggers (`log` in workflow code arrives through the SDK's sink) and, forwarded,
 * the Rust core's lines, all written in the one shape of log-format.ts with `context: temporal:<part>`.
 */
export class TemporalJsonLogger implements Logger {
  private readonly minimum: number;

  constructor(
    level: LogLevel,
    private readonly write: (line: string) => void = (line) => {
      process.stdout.write(`${line}\n`);
    },
  ) {
    this.minimum = SEVERITY.indexOf(TEMPORAL_LEVELS[level]);
  }

  log(level: TemporalLogLevel, message: string, meta?: LogMetadata): void {
    if (SEVERITY.indexOf(level) < this.minimum) {
      return;
    }
    const component = typeof meta?.sdkComponent === 'string' ? meta.sdkComponent : 'worker';
    this.write(
      formatLogLine({
        level: LEVEL_NAMES[level],
        message,
        service: 'worker',
        context: `temporal:${component}`,
        time: lineTime(meta),
        fields: temporalLogFields(meta),
      }),
    );
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }

  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }

  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }

  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }

  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * The logging half of the worker's Runtime.install options: the SDK's logger, and the Rust core's
 * lines forwarded to it (by default the core prints its own format to the console).
 */
export function temporalRuntimeLogging(level: LogLevel): {
  logger: TemporalJsonLogger;
  logging: { filter: { core: TemporalLogLevel; other: TemporalLogLevel }; forward: Record<string, never> };
} {
  return {
    logger: new TemporalJsonLogger(level),
    // The core's INFO lines are per poll and per task: WARN unless debugging.
    logging: { filter: { core: level === 'debug' ? 'INFO' : 'WARN', other: 'ERROR' }, forward: {} },
  };
}
