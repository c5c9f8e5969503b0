import { request as httpRequest } from 'node:http';
import type { ContractRecorder } from '../setup/contract-recorder.js';

export interface HttpAnswer<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is (for malformed bodies); overrides `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** `manual`: answer a redirect itself instead of following it. */
  redirect?: 'follow' | 'manual';
}

/**
 * An error with its code and its causes, whatever realm made it: fetch's TypeError comes from Node's
 * realm, not the suite's (jest's `instanceof Error` is false for it), and its `cause` says what failed
 * (`bad port`, a connect timeout, a reset).
 */
export function explainError(err: unknown): string {
  if (typeof err !== 'object' || err === null) {
    return String(err);
  }
  const { message, code, cause } = err as { message?: unknown; code?: unknown; cause?: unknown };
  const own = `${String(message ?? err)}${code !== undefined ? ` [${String(code)}]` : ''}`;
  return cause !== undefined && cause !== err ? `${own} (${explainError(cause)})` : own;
}

/** What a test's helpers know of the process behind a base URL (the stacks register their API). */
export const describeEndpoint = new Map<string, () => string>();

/** A small HTTP client for the e2e suites: JSON in and out, every answer returned (never thrown). */
export class Http {
  constructor(private readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer<T>> {
    // A connection per request: a kept-alive one can be closed by the server (its 5 s idle timeout)
    // while this process's event loop is busy (a suite compiling the OpenAPI document, starting sites),
    // and the next request written on it fails with "other side closed" (CI saw it). Loopback
    // connections cost next to nothing.
    const headers: Record<string, string> = { connection: 'close', ...options.headers };
    if (options.token !== undefined) {
      headers.authorization = `Bearer ${options.token}`;
    }
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, { method, headers, body, redirect: options.redirect });
    } catch (err) {
      // Say which process was asked and what became of it: a CI log then tells a crash from a port
      // another process held from a connection the client reused.
      const cause = explainError(err);
      const about = describeEndpoint.get(this.baseUrl)?.() ?? 'no process of the suite is known there';
      throw new Error(`${method} ${this.baseUrl}${path} failed: ${cause}\n${about}`, { cause: err });
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON; keep the text
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  }

  get<T = any>(path: string, options?: RequestOptions): Promise<HttpAnswer<T>> {
    return this.request<T>('GET', path, options);
  }

  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpAnswer<T>> {
    return this.request<T>('POST', path, { ...options, body });
  }

  patch<T = any>(path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpAnswer<T>> {
    return this.request<T>('PATCH', path, { ...options, body });
  }

  delete<T = any>(path: string, options?: RequestOptions): Promise<HttpAnswer<T>> {
    return this.request<T>('DELETE', path, options);
  }
}

/** Asserts the specification's error body and returns it. */
export function expectError(answer: HttpAnswer, code: string, statusCode: number): void {
  const body = answer.body as { error?: unknown; code?: unknown; statusCode?: unknown };
  if (
    answer.status !== statusCode ||
    body?.code !== code ||
    body?.statusCode !== statusCode ||
    typeof body?.error !== 'string'
  ) {
    throw new Error(`expected ${statusCode} ${code}, got ${answer.status} ${answer.text.slice(0, 500)}`);
  }
}

/** A RATE_LIMITED answer whose Retry-After is from 1 to `maxSeconds` seconds. */
export function expectRateLimited(answer: HttpAnswer, maxSeconds: number): void {
  expectError(answer, 'RATE_LIMITED', 429);
  const retryAfter = Number(answer.headers.get('retry-after'));
  if (!(retryAfter >= 1 && retryAfter <= maxSeconds)) {
    throw new Error(`expected Retry-After from 1 to ${maxSeconds} s, got ${answer.headers.get('retry-after')}`);
  }
}

/**
 * A request sent exactly as given: the path's bytes untouched (fetch would normalise `%2e%2e`, `..`
 * and unicode), header values as raw bytes (non-ASCII included) and repeated headers as separate
 * lines (an array value). The answer is read like Http's.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]> = {},
  body?: string | Buffer,
): Promise<HttpAnswer> {
  const { hostname, port } = new URL(baseUrl);
  // Node writes header values as latin1: a UTF-8 value goes out as its own bytes.
  const latin1 = (value: string): string => Buffer.from(value, 'utf8').toString('latin1');
  const sent: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    sent[name] = Array.isArray(value) ? value.map(latin1) : latin1(value);
  }
  if (body !== undefined) {
    sent['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers: sent, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text === '' ? undefined : JSON.parse(text);
        } catch {
          // not JSON; keep the text
        }
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
            answerHeaders.append(name, one);
          }
        }
        const status = res.statusCode ?? 0;
        // Not sent through fetch: handed to the contract check (test/setup/contract-setup.ts) here.
        const recorder = (globalThis as { __agentsiteContract?: ContractRecorder }).__agentsiteContract;
        if (recorder !== undefined && res.headers['x-correlation-id'] !== undefined) {
          const contentType = res.headers['content-type'];
          recorder.observe(new URL(baseUrl).origin, { method, path, status, contentType, text });
        }
        resolve({ status, body: parsed, headers: answerHeaders, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
