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
}

/** A small HTTP client for the e2e suites: JSON in and out, every answer returned (never thrown). */
export class Http {
  constructor(private readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer<T>> {
    const headers: Record<string, string> = { ...options.headers };
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
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
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
