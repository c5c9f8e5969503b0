/**
 * Stripe for the e2e suites: the environment of a stack with the Stripe provider (against the run's
 * stripe-mock), signed webhook events made the way Stripe makes them, and a recording proxy in front
 * of stripe-mock that can hold, alter or fail chosen answers (stripe-mock is stateless: a
 * PaymentIntent it returns is always `requires_payment_method`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { TEST_ENV } from '../setup/shared-runtime.js';

/** A key stripe-mock accepts: it checks the shape only, and wants no '_' after sk_test_. */
export const TEST_STRIPE_SECRET_KEY = 'sk_test_agentsiteE2e';
/** The recurring price of each paid tier, as STRIPE_PRICE_* give them. */
export const TEST_STRIPE_PRICES = {
  pro: 'price_agentsite_pro',
  harness: 'price_agentsite_harness',
  team: 'price_agentsite_team',
} as const;

/** The base URL of the run's stripe-mock; throws why there is none (so only the Stripe suites fail). */
export function stripeMockApiBase(): string {
  const base = process.env[TEST_ENV.stripeApiBase];
  if (base === undefined) {
    throw new Error(
      process.env[TEST_ENV.stripeProblem] ??
        `${TEST_ENV.stripeApiBase} is not set: run the Stripe suites with "npm test" (the global setup starts stripe-mock)`,
    );
  }
  return base;
}

/** A fresh endpoint signing secret in Stripe's shape. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('hex')}`;
}

export interface StripeTestEnv {
  /** For `Stack.start({ env })` / `startWorld({ env })`. */
  env: Record<string, string>;
  apiBase: string;
  secretKey: string;
  webhookSecret: string;
  prices: { pro: string; harness: string; team: string };
}

/**
 * The environment of a stack whose payments go to Stripe (here stripe-mock, or `apiBase`, e.g. a
 * StripeProxy's url). The test provider is switched off as in production. `env` is added last.
 */
export function stripeEnv(
  overrides: { apiBase?: string; webhookSecret?: string; secretKey?: string; env?: Record<string, string> } = {},
): StripeTestEnv {
  const apiBase = overrides.apiBase ?? stripeMockApiBase();
  const secretKey = overrides.secretKey ?? TEST_STRIPE_SECRET_KEY;
  const webhookSecret = overrides.webhookSecret ?? newWebhookSecret();
  const prices = { ...TEST_STRIPE_PRICES };
  return {
    env: {
      PAYMENT_PROVIDER: 'stripe',
      ALLOW_TEST_PAYMENTS: '',
      STRIPE_SECRET_KEY: secretKey,
      STRIPE_WEBHOOK_SECRET: webhookSecret,
      STRIPE_PRICE_PRO: prices.pro,
      STRIPE_PRICE_HARNESS: prices.harness,
      STRIPE_PRICE_TEAM: prices.team,
      STRIPE_API_BASE: apiBase,
      ...overrides.env,
    },
    apiBase,
    secretKey,
    webhookSecret,
    prices,
  };
}

/** The SDK's connection settings for a base URL such as http://127.0.0.1:12111 (the SDK takes no URL). */
export function stripeHostOptions(apiBase: string): { host: string; port: number; protocol: 'http' | 'https' } {
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)), protocol };
}

/** An SDK client on stripe-mock (or `apiBase`), for tests that call Stripe themselves. */
export function stripeClient(apiBase: string = stripeMockApiBase(), secretKey = TEST_STRIPE_SECRET_KEY): Stripe {
  return new Stripe(secretKey, { ...stripeHostOptions(apiBase), maxNetworkRetries: 0 });
}

export interface StripeTestEvent<T = Record<string, unknown>> {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
  data: { object: T; previous_attributes?: Record<string, unknown> };
}

/** A complete Stripe event (snapshot payload) of `type` around `dataObject`, with a unique evt_ id. */
export function stripeEvent<T>(
  type: string,
  dataObject: T,
  opts: {
    id?: string;
    /** Seconds since the epoch; default now. */
    created?: number;
    previousAttributes?: Record<string, unknown>;
    request?: { id: string | null; idempotency_key: string | null };
  } = {},
): StripeTestEvent<T> {
  return {
    id: opts.id ?? `evt_test_${randomUUID().replaceAll('-', '')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: opts.request ?? { id: null, idempotency_key: null },
    type,
    data:
      opts.previousAttributes === undefined
        ? { object: dataObject }
        : { object: dataObject, previous_attributes: opts.previousAttributes },
  };
}

/**
 * The body and `Stripe-Signature` header Stripe would send for `event` (an object, or the exact
 * payload text). `forged`: signed with another secret; `timestamp` (seconds): e.g. an old one for a
 * replay.
 */
export function signStripeEvent(
  event: object | string,
  secret: string,
  opts: { timestamp?: number; forged?: boolean } = {},
): { payload: string; signature: string } {
  const payload = typeof event === 'string' ? event : JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.forged === true ? newWebhookSecret() : secret,
    timestamp: opts.timestamp,
  });
  return { payload, signature };
}

/** POSTs a signed event to a webhook endpoint (e.g. `${stack.baseUrl}/api/...`), as Stripe does. */
export async function deliverStripeEvent(
  url: string,
  event: object | string,
  secret: string,
  opts: { timestamp?: number; forged?: boolean } = {},
): Promise<Response> {
  const { payload, signature } = signStripeEvent(event, secret, opts);
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Stripe-Signature': signature,
      'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    },
    body: payload,
  });
}

/** One request the provider sent to Stripe, as the proxy saw it. */
export interface RecordedStripeRequest {
  method: string;
  /** Without the query, e.g. /v1/payment_intents/pi_123/confirm. */
  path: string;
  /** The query string, flat: `expand[0]` → `latest_charge`. */
  query: Record<string, string>;
  /** The form body, flat: `metadata[purchase_id]` → `…` (a repeated key keeps its last value). */
  form: Record<string, string>;
  idempotencyKey: string | undefined;
  headers: IncomingHttpHeaders;
  /** The status of the answer sent back, once sent. */
  status?: number;
}

/** Which requests a rule applies to: method (any when omitted) and a path pattern; `once`: the first only. */
export interface StripeRequestMatch {
  method?: string;
  path: RegExp;
  once?: boolean;
}

export interface HeldStripeRequest {
  /** Resolves with the first matching request, once it has arrived (it is forwarded meanwhile). */
  reached: Promise<RecordedStripeRequest>;
  /** Lets the held answers go out; later matching requests pass without waiting. */
  release(): void;
}

type JsonObject = Record<string, unknown>;

type Rule = StripeRequestMatch &
  (
    | {
        kind: 'hold';
        released: Promise<void>;
        onReached: (request: RecordedStripeRequest) => void;
        fn?: (body: JsonObject, request: RecordedStripeRequest) => JsonObject | void;
      }
    | { kind: 'rewrite'; fn: (body: JsonObject, request: RecordedStripeRequest) => JsonObject | void }
    | { kind: 'fail'; status: number; body: unknown }
  );

/** Stripe's answer to a declined card (HTTP 402), for `fail`. */
export const CARD_DECLINED = {
  error: {
    type: 'card_error',
    code: 'card_declined',
    decline_code: 'generic_decline',
    message: 'Your card was declined.',
  },
} as const;

/**
 * An HTTP server in front of stripe-mock: forwards every request unchanged, records each, and applies
 * the test's rules (first match wins). Give its `url` as the stack's STRIPE_API_BASE.
 */
export class StripeProxy {
  private readonly recorded: RecordedStripeRequest[] = [];
  private rules: Rule[] = [];
  /** Every hold's release, including those of `once` holds already used. */
  private releases: Array<() => void> = [];

  private constructor(
    private readonly server: http.Server,
    private readonly target: URL,
    readonly url: string,
  ) {}

  static async start(target: string = stripeMockApiBase()): Promise<StripeProxy> {
    const upstream = new URL(target);
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const proxy = new StripeProxy(server, upstream, `http://127.0.0.1:${port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      proxy.handle(req, res).catch((err: unknown) => {
        // Stripe's shape, so the SDK reports what broke (e.g. a rewrite of an answer that is not JSON).
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(502, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: `StripeProxy: ${String(err)}` } }));
      });
    });
    return proxy;
  }

  /** What was sent so far, in order; optionally only what `match` matches. */
  requests(match?: Omit<StripeRequestMatch, 'once'>): RecordedStripeRequest[] {
    return this.recorded.filter((request) => match === undefined || matches(match, request));
  }

  /** Forwards matching requests but keeps their answers until `release()`; `fn` may alter them as `rewrite` does. */
  hold(
    match: StripeRequestMatch,
    fn?: (body: JsonObject, request: RecordedStripeRequest) => JsonObject | void,
  ): HeldStripeRequest {
    let release!: () => void;
    let onReached!: (request: RecordedStripeRequest) => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<RecordedStripeRequest>((resolve) => (onReached = resolve));
    this.rules.push({ ...match, kind: 'hold', released, onReached, fn });
    this.releases.push(release);
    return { reached, release };
  }

  /** Alters the JSON answer of matching requests: `fn` edits the body in place or returns a new one. */
  rewrite(
    match: StripeRequestMatch,
    fn: (body: JsonObject, request: RecordedStripeRequest) => JsonObject | void,
  ): void {
    this.rules.push({ ...match, kind: 'rewrite', fn });
  }

  /** Answers matching requests with `status` and `body` without forwarding them (e.g. 402, CARD_DECLINED). */
  fail(match: StripeRequestMatch, status: number, body: unknown = CARD_DECLINED): void {
    this.rules.push({ ...match, kind: 'fail', status, body });
  }

  /** Forgets the recorded requests and the rules; answers still held go out. */
  clear(): void {
    this.releaseAll();
    this.rules = [];
    this.recorded.length = 0;
  }

  async close(): Promise<void> {
    this.releaseAll();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private releaseAll(): void {
    this.releases.forEach((release) => release());
    this.releases = [];
  }

  private takeRule(request: RecordedStripeRequest): Rule | undefined {
    const index = this.rules.findIndex((rule) => matches(rule, request));
    if (index < 0) {
      return undefined;
    }
    const rule = this.rules[index];
    if (rule.once === true) {
      this.rules.splice(index, 1);
    }
    return rule;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://proxy');
    const contentType = String(req.headers['content-type'] ?? '');
    const request: RecordedStripeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      form: contentType.startsWith('application/x-www-form-urlencoded')
        ? Object.fromEntries(new URLSearchParams(body.toString('utf8')))
        : {},
      idempotencyKey: headerValue(req.headers['idempotency-key']),
      headers: req.headers,
    };
    this.recorded.push(request);
    const rule = this.takeRule(request);

    if (rule?.kind === 'fail') {
      const text = JSON.stringify(rule.body);
      request.status = rule.status;
      res.writeHead(rule.status, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'Request-Id': `req_proxy_${randomUUID().slice(0, 8)}`,
      });
      res.end(text);
      return;
    }
    if (rule?.kind === 'hold') {
      rule.onReached(request);
    }
    const answer = await this.forward(req, body);
    let answerBody = answer.body;
    if ((rule?.kind === 'rewrite' || rule?.kind === 'hold') && rule.fn !== undefined) {
      const parsed = JSON.parse(answerBody.toString('utf8')) as JsonObject;
      answerBody = Buffer.from(JSON.stringify(rule.fn(parsed, request) ?? parsed));
    }
    if (rule?.kind === 'hold') {
      await rule.released;
    }
    request.status = answer.status;
    const headers = { ...answer.headers, 'content-length': String(answerBody.length) };
    delete headers['transfer-encoding'];
    res.writeHead(answer.status, headers);
    res.end(answerBody);
  }

  private forward(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = http.request(
        {
          host: this.target.hostname,
          port: this.target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: this.target.host },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () =>
            resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(parts) }),
          );
          answer.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}

function matches(match: Omit<StripeRequestMatch, 'once'>, request: RecordedStripeRequest): boolean {
  return (match.method === undefined || match.method.toUpperCase() === request.method) && match.path.test(request.path);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
