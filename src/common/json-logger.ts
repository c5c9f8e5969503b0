import { format } from 'node:util';
import { ConsoleLogger, type LogLevel as NestLogLevel } from '@nestjs/common';
import type { LogLevel } from '../config/settings.js';
import { currentLogFields } from './log-context.js';
import { formatLogLine, type LogLevelName, type LogService, messageText, stackForLog } from './log-format.js';

/** LOG_LEVEL → the Nest levels written. */
export const NEST_LEVELS: Record<LogLevel, NestLogLevel[]> = {
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  log: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/** Nest's level names → the one set of names every line uses (Nest's `log` is `info`). */
const LEVEL_NAMES: Record<NestLogLevel, LogLevelName> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

type JsonOptions = Parameters<ConsoleLogger['printAsJson']>[1];

/**
 * Nest's logger, writing our line shape (see log-format.ts) with the current request's or activity's
 * ids. Nest's own argument handling (context, stack, structured params) is kept: only the output changes.
 */
export class JsonLogger extends ConsoleLogger {
  constructor(
    private readonly service: LogService,
    context: string,
    level: LogLevel,
    private readonly write: (line: string, stream: 'stdout' | 'stderr') => void = (line, stream) => {
      process[stream].write(`${line}\n`);
    },
  ) {
    super(context, { json: true, logLevels: NEST_LEVELS[level] });
  }

  protected override printAsJson(message: unknown, options: JsonOptions): void {
    const fields: Record<string, unknown> = { ...currentLogFields(), ...options.params };
    if (options.error !== undefined) {
      fields.error = options.error;
    }
    if (typeof options.errorStack === 'string' && options.errorStack !== '') {
      fields.stack = stackForLog(options.errorStack);
    }
    const line = formatLogLine({
      level: LEVEL_NAMES[options.logLevel],
      message: messageText(message),
      service: this.service,
      context: options.context,
      fields,
    });
    this.write(line, options.writeStreamType ?? 'stdout');
  }
}

/** The process's logger (Nest's, and the one passed around before Nest is up). */
export function createJsonLogger(service: LogService, level: LogLevel, context?: string): JsonLogger {
  return new JsonLogger(service, context ?? 'agentsite', level);
}

/**
 * Sends what libraries print with `console` (the model SDK's deprecation notices, for one) through
 * the logger, so the process writes nothing but JSON lines. Context `console`.
 */
export function routeConsoleTo(logger: JsonLogger): void {
  const to =
    (level: 'log' | 'warn' | 'error' | 'debug') =>
    (...args: unknown[]): void => {
      logger[level](format(...args), 'console');
    };
  console.log = to('log');
  console.info = to('log');
  console.warn = to('warn');
  console.error = to('error');
  console.debug = to('debug');
}
