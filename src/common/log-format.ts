/**
 * The one shape of every log line the API and the worker write (Nest's loggers, the access log and the
 * Temporal SDK's worker, activity and workflow loggers all end here): one JSON object per line,
 *
 *   {"time","level","service","context","message","requestId","userId","agentId","runId", …ids and sizes}
 *
 * The four join keys always come first when known. Values that could carry secrets or run data are
 * never written: secret-named fields are redacted, data-named fields are replaced by their size.
 */

export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Which process wrote the line. */
export type LogService = 'api' | 'worker';

/** The fields that join a request to its run across the API's and the worker's logs. */
export const JOIN_FIELDS = ['requestId', 'userId', 'agentId', 'runId'] as const;
export type JoinField = (typeof JOIN_FIELDS)[number];
export type LogFields = Partial<Record<JoinField, string>>;

export interface LogRecord {
  level: LogLevelName;
  message: string;
  service: LogService;
  context?: string;
  time?: Date;
  /** The join fields and anything else worth keeping (ids, sizes, durations). */
  fields?: Record<string, unknown>;
}

/**
 * Field names whose values are credentials: written as "[redacted]". `…token` at the end only, so
 * counts such as `inputTokens` stay.
 */
const SECRET_KEY = /(authorization|password|passphrase|secret|cookie|api[-_]?key|signature)|token$/i;
/**
 * Field names whose values are run or request data (payloads, prompts, tool inputs and outputs,
 * bodies, queries): written as their size in bytes, never their content.
 */
const DATA_KEY =
  /^(payload|payloads|body|input|inputs|output|outputs|result|results|prompt|system|systemPrompt|messages|content|query|args|details|headers|memo)$/i;

/** Deep enough for an error's cause and a small object of ids; deeper structures are data. */
const MAX_DEPTH = 3;

function byteSize(value: unknown): number {
  if (value === undefined) {
    return 0;
  }
  if (typeof value === 'string') {
    return Buffer.byteLength(value);
  }
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return value.byteLength;
  }
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    return 0;
  }
}

/**
 * The classes of PostgreSQL's errors as they reach our code: TypeORM's wrapper, and pg's own
 * (`DatabaseError`, whose name is `error`). Their message is PostgreSQL's, which quotes the values
 * that failed (`invalid input syntax for type uuid: "…"`): the log keeps their SQLSTATE instead
 * (DatabaseLogger has already written it with the statement).
 */
const DATABASE_ERROR_NAMES = new Set(['QueryFailedError', 'error']);
const DATABASE_STACK_HEAD = new RegExp(`^(${[...DATABASE_ERROR_NAMES].join('|')}): [^\\n]*`);
/** What replaces the message of a PostgreSQL error in a log line. */
export const DATABASE_MESSAGE_OMITTED = "[PostgreSQL's message omitted: it may quote values]";

/** A stack as the log keeps it: a PostgreSQL error's first line without its message. */
export function stackForLog(stack: string): string {
  return stack.replace(DATABASE_STACK_HEAD, (_head, name: string) => `${name}: ${DATABASE_MESSAGE_OMITTED}`);
}

/**
 * An error as the log keeps it: its class and code, the message only of errors of our own code.
 * Temporal's failures (an activity's or a run's outcome) carry a site's or the model's words, which
 * stay encrypted in Temporal and out of the log; their type is the specification's code. A
 * PostgreSQL error keeps its SQLSTATE (`code`), not its message.
 */
export function serializeError(error: unknown, depth = 0): Record<string, unknown> {
  const e = error as { name?: unknown; message?: unknown; type?: unknown; code?: unknown; cause?: unknown };
  const name = typeof e?.name === 'string' ? e.name : typeof error;
  const out: Record<string, unknown> = { name };
  const failure = name.endsWith('Failure') || typeof e?.type === 'string' || DATABASE_ERROR_NAMES.has(name);
  if (typeof e?.type === 'string') {
    out.type = e.type;
  }
  if (typeof e?.code === 'string' || typeof e?.code === 'number') {
    out.code = e.code;
  }
  if (!failure && typeof e?.message === 'string') {
    out.message = e.message;
  }
  if (e?.cause !== undefined && e.cause !== null && depth < MAX_DEPTH) {
    out.cause = serializeError(e.cause, depth + 1);
  }
  return out;
}

function isError(value: unknown): boolean {
  return (
    value instanceof Error ||
    (typeof value === 'object' && value !== null && 'name' in value && 'message' in value && 'stack' in value)
  );
}

/** One value made safe to log: secrets redacted, data reduced to its size, errors to their class. */
export function sanitize(key: string, value: unknown, depth = 0): unknown {
  if (value === undefined || value === null) {
    return value;
  }
  if (SECRET_KEY.test(key)) {
    return '[redacted]';
  }
  if (DATA_KEY.test(key)) {
    return { omittedBytes: byteSize(value) };
  }
  if (typeof value === 'bigint') {
    return value.toString();
  }
  if (typeof value === 'symbol' || typeof value === 'function') {
    return undefined;
  }
  if (isError(value)) {
    return serializeError(value);
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return { omittedBytes: value.byteLength };
  }
  if (typeof value !== 'object') {
    return value;
  }
  if (depth >= MAX_DEPTH) {
    return { omittedBytes: byteSize(value) };
  }
  if (Array.isArray(value)) {
    return value.map((item) => sanitize(key, item, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const safe = sanitize(k, v, depth + 1);
    if (safe !== undefined) {
      out[k] = safe;
    }
  }
  return out;
}

/** Fields a caller may not overwrite: they are the line's frame. */
const FRAME = new Set(['time', 'level', 'service', 'context', 'message', 'pid']);

/** The log line (without its newline) for one record. */
export function formatLogLine(record: LogRecord): string {
  const fields = record.fields ?? {};
  const line: Record<string, unknown> = {
    time: (record.time ?? new Date()).toISOString(),
    level: record.level,
    service: record.service,
    pid: process.pid,
  };
  if (record.context !== undefined && record.context !== '') {
    line.context = record.context;
  }
  line.message = record.message;
  for (const key of JOIN_FIELDS) {
    const value = fields[key];
    if (typeof value === 'string' && value !== '') {
      line[key] = value;
    }
  }
  for (const [key, value] of Object.entries(fields)) {
    if (FRAME.has(key) || (JOIN_FIELDS as readonly string[]).includes(key)) {
      continue;
    }
    const safe = sanitize(key, value);
    if (safe !== undefined) {
      line[key] = safe;
    }
  }
  return JSON.stringify(line);
}

/** A message of any type as one line of text (Nest accepts objects as messages). */
export function messageText(message: unknown): string {
  if (typeof message === 'string') {
    return message;
  }
  if (isError(message)) {
    const e = message as Error;
    return DATABASE_ERROR_NAMES.has(e.name) ? `${e.name}: ${DATABASE_MESSAGE_OMITTED}` : `${e.name}: ${e.message}`;
  }
  try {
    return JSON.stringify(sanitize('message', message)) ?? String(message);
  } catch {
    return String(message);
  }
}
