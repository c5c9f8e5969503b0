/**
 * `npm run bench:logging`: the service's hand-written JSON logger (src/common/json-logger.ts, through
 * Nest's Logger as the access log calls it) against pino 10 configured to write the same lines
 * (same fields and names, the same redaction: secrets "[redacted]", data fields as their size, by
 * pino's `redact`), side by side in alternating rounds in one process. Two kinds of line:
 *
 * - access: what access-log.ts writes for every request (method, route, status, duration, ids);
 * - app: a service line with a secret, a body and an error (the redaction's work).
 *
 * Both write synchronously to the same destination (/dev/null, or the file given as the first
 * argument). pino's `redact` takes paths, not patterns: the same redaction is every secret and data
 * name at depths 1 to 3 (`key`, `*.key`, `*.*.key`), whose wildcards are what it pays for. For
 * comparison, pino twice more: with its `redact` on the top-level names only (not the same lines: a
 * nested secret is written), and with our sanitizer as its `formatters.log` instead of `redact`.
 * Prints lines/s per side and the ratio pino/ours; a ratio above 1 means pino is faster.
 * BENCH_LOG_LINES sets the lines per side and kind (default 200,000).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import pino from 'pino';
import { JsonLogger } from '../src/common/json-logger.js';
import { runWithLogFields, currentLogFields } from '../src/common/log-context.js';
import { sanitize, serializeError } from '../src/common/log-format.js';

/** Lines per side and kind, split over the rounds. */
const LINES = Number(process.env.BENCH_LOG_LINES ?? 200_000);
const ROUNDS = 4;
const PER_ROUND = Math.ceil(LINES / ROUNDS);
const destination = process.argv[2] ?? '/dev/null';

/** The field names log-format.ts redacts or reduces to a size that these lines carry, at any of 3 depths. */
const SECRET_KEYS = ['authorization', 'password', 'token', 'accessToken', 'cookie', 'apiKey', 'secret', 'signature'];
const DATA_KEYS = ['payload', 'body', 'input', 'output', 'result', 'prompt', 'messages', 'content', 'query', 'headers'];
const at3 = (key: string): string[] => [key, `*.${key}`, `*.*.${key}`];

function byteSize(value: unknown): number {
  return typeof value === 'string' ? Buffer.byteLength(value) : Buffer.byteLength(JSON.stringify(value) ?? '');
}

type Redaction = 'redact' | 'redact-top-level' | 'our-sanitizer';

function pinoLogger(stream: pino.DestinationStream, redaction: Redaction = 'redact'): pino.Logger {
  const data = new Set(DATA_KEYS);
  const depths = redaction === 'redact' ? at3 : (key: string) => [key];
  return pino(
    {
      level: 'info',
      messageKey: 'message',
      base: { service: 'api', pid: process.pid },
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => currentLogFields() ?? {},
      ...(redaction === 'our-sanitizer'
        ? {
            formatters: {
              level: (label: string) => ({ level: label }),
              log: (object: Record<string, unknown>) => sanitize('', object) as Record<string, unknown>,
            },
          }
        : {
            serializers: { error: serializeError },
            redact: {
              paths: [...SECRET_KEYS, ...DATA_KEYS].flatMap(depths),
              censor: (value: unknown, path: string[]) =>
                data.has(path[path.length - 1] ?? '') ? { omittedBytes: byteSize(value) } : '[redacted]',
            },
          }),
    },
    stream,
  );
}

interface Line {
  message: string;
  fields: Record<string, unknown>;
}

const ACCESS: Line = {
  message: 'GET /api/agents/:id/runs 200',
  fields: {
    requestId: '6f1d1a8e-3f0a-4c8e-9a51-0c6f6d7a1b22',
    userId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    agentId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    method: 'GET',
    route: '/api/agents/:id/runs',
    status: 200,
    durationMs: 12.4,
  },
};

const APP: Line = {
  message: 'tool call refused by the site',
  fields: {
    runId: 'c1a8d9a2-9b55-4bb9-9f3c-1e2f3a4b5c6d',
    site: { host: 'shop.example', authorization: 'Bearer abc.def.ghi' },
    token: 'sk_live_not_a_real_one',
    body: { items: [1, 2, 3], note: 'x'.repeat(200) },
    error: Object.assign(new Error('upstream answered 429'), { code: 'OUTGOING_RATE_LIMITED' }),
    attempt: 2,
  },
};

function ours(fd: number): (line: Line) => void {
  const logger = new JsonLogger('api', 'agentsite', 'log', (text) => {
    writeSync(fd, `${text}\n`);
  });
  Logger.overrideLogger(logger);
  const http = new Logger('http');
  return (line) => http.log(line.message, line.fields);
}

function viaPino(stream: pino.DestinationStream, redaction?: Redaction): (line: Line) => void {
  const http = pinoLogger(stream, redaction).child({ context: 'http' });
  return (line) => http.info(line.fields, line.message);
}

function rate(write: (line: Line) => void, line: Line, lines = PER_ROUND): number {
  const started = performance.now();
  runWithLogFields({ requestId: 'bench-request-0001' }, () => {
    for (let i = 0; i < lines; i++) {
      write(line);
    }
  });
  return lines / ((performance.now() - started) / 1000);
}

/** One line of each kind from each logger, to see they are the same lines. */
function samples(): void {
  const captured: string[] = [];
  Logger.overrideLogger(new JsonLogger('api', 'agentsite', 'log', (text) => captured.push(text)));
  const http = new Logger('http');
  const capture = { write: (text: string) => captured.push(text.trimEnd()) };
  const redacted = viaPino(capture, 'redact');
  const sanitized = viaPino(capture, 'our-sanitizer');
  for (const line of [ACCESS, APP]) {
    runWithLogFields({ requestId: 'bench-request-0001' }, () => {
      http.log(line.message, line.fields);
      redacted(line);
      sanitized(line);
    });
  }
  console.log(`sample lines (ours, pino with redact, pino with our sanitizer):\n${captured.join('\n')}\n`);
}

function main(): void {
  samples();
  const fd = openSync(destination, 'a');
  const stream = pino.destination({ dest: fd, sync: true });
  const sides = {
    ours: ours(fd),
    'pino, redact (same lines)': viaPino(stream, 'redact'),
    'pino, redact top level only (NOT the same lines)': viaPino(stream, 'redact-top-level'),
    'pino, our sanitizer as formatters.log (same lines)': viaPino(stream, 'our-sanitizer'),
  };
  const results: Record<string, Record<string, number[]>> = {};
  for (const [kind, line] of Object.entries({ access: ACCESS, app: APP })) {
    results[kind] = {};
    // A warm-up round, not counted, then alternating rounds.
    for (const write of Object.values(sides)) {
      rate(write, line, Math.min(PER_ROUND, 5000));
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, write] of Object.entries(sides)) {
        (results[kind]![name] ??= []).push(rate(write, line));
      }
    }
  }
  console.log(`${LINES} lines per side and kind in ${ROUNDS} alternating rounds, to ${destination}; median lines/s`);
  for (const [kind, bySide] of Object.entries(results)) {
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const base = median(bySide.ours!);
    for (const [name, rates] of Object.entries(bySide)) {
      const m = median(rates);
      console.log(
        `${kind.padEnd(7)} ${name.padEnd(50)} ${Math.round(m).toLocaleString('en-US').padStart(10)} lines/s` +
          (name === 'ours' ? '' : `   pino/ours ${(m / base).toFixed(2)}x`),
      );
    }
  }
  closeSync(fd);
}

main();
