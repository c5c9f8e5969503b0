import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppModule } from './app.module.js';
import { accessLogMiddleware, noteRoute } from './common/access-log.js';
import { registerBodyParsers } from './common/body-parsers.js';
import { apiCorsOptions, securityHeaders } from './common/browser-security.js';
import { correlationMiddleware, resumeLogFields } from './common/correlation.js';
import { answerFrameworkError } from './common/framework-errors.js';
import { type ApiRequest, inOrder, type NodeMiddleware } from './common/http.js';
import { STRIPE_WEBHOOK_PATH } from './billing/stripe-webhook.controller.js';
import { createJsonLogger, type JsonLogger } from './common/json-logger.js';
import { closeRequestBodies, declareIdParameters } from './common/openapi-refinements.js';
import { type Settings } from './config/settings.js';
import { readPackageVersion } from './common/version.js';
import { serveConsole } from './console/serve-console.js';
import { MCP_PATH, McpEndpoint } from './mcp-server/mcp-endpoint.js';
import { httpMetricsMiddleware } from './metrics/http-metrics.middleware.js';
import { MetricsService } from './metrics/metrics.service.js';
import { mountMcpAuthorizationServer } from './mcp-auth/mount.js';
import { AuthenticationBeforeBody } from './auth/guards.js';
import { codecBeforeBody, codecBodyLimit } from './temporal-codec/codec-body.middleware.js';
import { CODEC_PATH } from './temporal-codec/temporal-codec.controller.js';

/** The OpenAPI page (Swagger UI) and its documents. */
const DOCS_PATH = '/api/docs';

/** Largest JSON body the API accepts; webhook payloads included. */
export const MAX_BODY_BYTES = 256 * 1024;

/** The API's logger: JSON lines of the one shape the worker writes too (src/common/log-format.ts). */
export function createLogger(settings: Settings, context?: string): JsonLogger {
  return createJsonLogger('api', settings.logLevel, context);
}

/** Stripe signs the exact bytes it sends: its webhook route takes them raw (any type). */
function isStripeWebhook(req: ApiRequest): boolean {
  const url = req.routeOptions.url;
  return !req.is404 && typeof url === 'string' && url.toLowerCase() === STRIPE_WEBHOOK_PATH;
}

/**
 * TRUST_PROXY as Fastify takes it. A number of hops trusts that many proxies from the connection on,
 * as Express did (Fastify itself would trust none for a number).
 */
function trustProxyOption(
  trust: Settings['trustProxy'],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') {
    return (_address, hop) => hop < trust;
  }
  return trust === false ? false : [...trust];
}

/**
 * Builds the HTTP application (Fastify): correlation ids, security headers and CORS, body parsing,
 * the /api prefix and the OpenAPI page. Paths match in any case, with or without a trailing slash.
 */
export async function createApp(settings: Settings): Promise<INestApplication> {
  // What every request gets before its route, in this order (also for a path the router refuses).
  const before: NodeMiddleware[] = [];
  const adapter = new FastifyAdapter({
    frameworkErrors: answerFrameworkError(before),
    trustProxy: trustProxyOption(settings.trustProxy),
    bodyLimit: MAX_BODY_BYTES,
    // Node's own server timeouts, as the API had on Express (Fastify would keep idle connections 72 s
    // and let a request take forever), and requests on open connections still answered while the
    // server closes (Fastify would answer them 503 with a body of its own).
    keepAliveTimeout: 5_000,
    requestTimeout: 300_000,
    return503OnClosing: false,
    // As Express routed: any case, a trailing slash ignored, a route parameter of any length (the
    // header size limit bounds it; Fastify would answer 414 past 100 characters).
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 16 * 1024 },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(settings), adapter, {
    bodyParser: false,
    logger: createLogger(settings),
  });
  const fastify = app.getHttpAdapter().getInstance();
  // What runs first for every request, before Fastify reads a body, in this order: the request id and
  // its log fields, then the access log line, so even a refused body has both. One Fastify request
  // hook on the Node request and response (the adapter's first, ahead of its own hooks, CORS and
  // middie): the same functions middie ran, without middie's per-middleware matching and wrapping.
  before.push(
    correlationMiddleware,
    accessLogMiddleware,
    // A refused body is timed (and counted as a webhook refusal) too.
    httpMetricsMiddleware(app.get(MetricsService)),
    securityHeaders({ https: settings.publicBaseUrl.startsWith('https:'), docsPath: DOCS_PATH }),
  );
  const beforeRoutes = inOrder(before);
  adapter.setOnRequestHook((request, reply, done) =>
    beforeRoutes(request.raw, reply.raw, (err?: unknown) => done(err as Error | undefined)),
  );
  // CORS (@fastify/cors): its request hook runs right after the one above, so a preflight it answers
  // carries the request id, the security headers and its access log line; before the middleware
  // below, the guards and the routes.
  if (settings.corsOrigins.length > 0) {
    app.enableCors(apiCorsOptions({ origins: settings.corsOrigins, ownRules: [CODEC_PATH.toLowerCase()] }));
  }
  // The OAuth authorization server for MCP clients (oidc-provider at /mcp-oauth, its metadata under
  // /.well-known): on the Node request, since it reads its own bodies, and outside /api (its errors
  // are OAuth error JSON, not the API's error body).
  mountMcpAuthorizationServer(app, settings.publicBaseUrl);
  // agentsite's MCP endpoint reads its own bodies (JSON-RPC errors for bad JSON, 413 past its limit)
  // and has its own bearer check and limits.
  app.use(MCP_PATH, app.get(McpEndpoint).middleware());
  // Bodies (read once the route is known): JSON and forms up to MAX_BODY_BYTES, valid UTF-8; Stripe's
  // webhook raw; the Temporal codec's payload routes take payloads as Temporal stores them (up to 2 MB
  // each, base64 in JSON): their own, larger limit, for admins only, checked (with the per-address
  // limit) before the body is read. A refused body is answered by the error filter with the API's
  // error body (on /api/webhooks/*, WEBHOOK_PAYLOAD_INVALID).
  registerBodyParsers(fastify, { limitFor: (req) => codecBodyLimit(req, MAX_BODY_BYTES), rawBytes: isStripeWebhook });
  fastify.addHook('preParsing', codecBeforeBody({ settings, auth: app.get(AuthenticationBeforeBody) }));
  // Once the body is read: the route the request goes to (the access log's and the metrics'), and
  // the request's log fields again (reading the body loses the async context).
  fastify.addHook('preValidation', noteRoute);
  fastify.addHook('preHandler', resumeLogFields);
  app.setGlobalPrefix('api');
  app.enableShutdownHooks();
  SwaggerModule.setup(DOCS_PATH.slice(1), app, () => buildOpenApi(app), {
    jsonDocumentUrl: `${DOCS_PATH.slice(1)}/openapi.json`,
    yamlDocumentUrl: `${DOCS_PATH.slice(1)}/openapi.yaml`,
  });
  await app.init();
  // The console outside /api; anything no route takes gets NOT_FOUND (Nest's not-found handler,
  // through the error filter).
  const stripeJs = settings.paymentProvider === 'stripe' && settings.stripe?.publishableKey !== undefined;
  for (const handler of serveConsole({ stripeJs })) {
    app.use(handler);
  }
  return app;
}

export function buildOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('agentsite API')
    .setDescription(
      'Connects an AI chat and AI agents to the tools of external sites. Every error answers ' +
        '`{ error, code, statusCode }` with a code from the specification.',
    )
    .setVersion(readPackageVersion())
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  declareInternalErrors(document);
  closeRequestBodies(document);
  declareIdParameters(document);
  return document;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/**
 * Any route answers 500 INTERNAL_ERROR when a dependency fails under it (PostgreSQL restarting, an
 * unexpected fault): declared once here for every operation rather than on each route.
 */
function declareInternalErrors(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation !== undefined && operation.responses['500'] === undefined) {
        operation.responses['500'] = {
          description: '`INTERNAL_ERROR`: an unexpected failure (the log has the details, the answer none)',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } } },
        };
      }
    }
  }
}
