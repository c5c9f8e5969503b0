import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppModule } from './app.module.js';
import { AppError } from './common/app-error.js';
import { accessLogMiddleware } from './common/access-log.js';
import { apiCorsOptions, securityHeaders } from './common/browser-security.js';
import { correlationMiddleware, resumeLogFieldsMiddleware } from './common/correlation.js';
import { STRIPE_WEBHOOK_PATH } from './billing/stripe-webhook.controller.js';
import { createJsonLogger, type JsonLogger } from './common/json-logger.js';
import { closeRequestBodies, declareIdParameters } from './common/openapi-refinements.js';
import { bodyParserProblem, writeAppError } from './common/error-filter.js';
import { type Settings } from './config/settings.js';
import { readPackageVersion } from './common/version.js';
import { InvalidUtf8BodyError } from './common/invalid-utf8-body.error.js';
import { serveConsole } from './console/serve-console.js';
import { MCP_PATH, McpEndpoint } from './mcp-server/mcp-endpoint.js';
import { httpMetricsMiddleware } from './metrics/http-metrics.middleware.js';
import { MetricsService } from './metrics/metrics.service.js';
import { mountMcpAuthorizationServer } from './mcp-auth/mount.js';
import { AuthenticationBeforeBody } from './auth/guards.js';
import { codecBodyParser } from './temporal-codec/codec-body.middleware.js';
import { CODEC_PATH } from './temporal-codec/temporal-codec.controller.js';

/** The OpenAPI page (Swagger UI) and its documents. */
const DOCS_PATH = '/api/docs';

/** Largest JSON body the API accepts; webhook payloads included. */
export const MAX_BODY_BYTES = 256 * 1024;

/** The API's logger: JSON lines of the one shape the worker writes too (src/common/log-format.ts). */
export function createLogger(settings: Settings, context?: string): JsonLogger {
  return createJsonLogger('api', settings.logLevel, context);
}

/**
 * Builds the HTTP application: correlation ids, security headers and CORS, body parsing, the /api
 * prefix and the OpenAPI page.
 */
export async function createApp(settings: Settings): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings), {
    bodyParser: false,
    logger: createLogger(settings),
  });
  app.set('trust proxy', settings.trustProxy);
  app.disable('x-powered-by');
  // The request id and its log fields first, then the access log line, so even an answer of the
  // body parsers below has both.
  app.use(correlationMiddleware);
  app.use(accessLogMiddleware);
  // Before the body parsers: a refused body is timed (and counted as a webhook refusal) too.
  app.use(httpMetricsMiddleware(app.get(MetricsService)));
  app.use(securityHeaders({ https: settings.publicBaseUrl.startsWith('https:'), docsPath: DOCS_PATH }));
  if (settings.corsOrigins.length > 0) {
    app.enableCors(apiCorsOptions({ origins: settings.corsOrigins, ownRules: [CODEC_PATH.toLowerCase()] }));
  }
  // The OAuth authorization server for MCP clients (oidc-provider at /mcp-oauth, its metadata under
  // /.well-known): before the body parsers, since it reads its own bodies, and outside /api (its
  // errors are OAuth error JSON, not the API's error body).
  mountMcpAuthorizationServer(app, settings.publicBaseUrl);
  // Bodies must be valid UTF-8: a decoder would otherwise replace bad bytes silently.
  const verify = (_req: unknown, _res: unknown, buf: Buffer): void => {
    if (!isUtf8(buf)) {
      throw new InvalidUtf8BodyError();
    }
  };
  // The Temporal codec's payload routes take payloads as Temporal stores them (up to 2 MB each, base64
  // in JSON): their own, larger limit, for admins only, checked (with the per-address limit) before
  // the body is read. Express skips a body parser once one has read the body.
  // Stripe signs the exact bytes it sends: its webhook route reads them raw (any type), so the
  // signature is checked on what arrived.
  // agentsite's MCP endpoint reads its own bodies (JSON-RPC errors for bad JSON, 413 past its limit)
  // and has its own bearer check and limits: before the API's body parsers.
  app.use(MCP_PATH, app.get(McpEndpoint).middleware());
  app.use(STRIPE_WEBHOOK_PATH, express.raw({ type: () => true, limit: MAX_BODY_BYTES }));
  app.use(CODEC_PATH, codecBodyParser({ settings, auth: app.get(AuthenticationBeforeBody), verify }));
  app.use(
    express.json({ limit: MAX_BODY_BYTES, strict: true, type: ['application/json', 'application/*+json'], verify }),
  );
  app.use(express.urlencoded({ extended: false, limit: MAX_BODY_BYTES, verify }));
  // Body parser failures never reach Nest's filters: answer them here with the same error body
  // (on the webhook route, with the webhook's own code). This runs before routing, so it can only
  // look at the path: case-insensitively, as Express routes.
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    const problem = bodyParserProblem(err);
    if (problem === undefined) {
      next(err);
      return;
    }
    const webhook = req.path.toLowerCase().startsWith('/api/webhooks/');
    writeAppError(res, webhook ? new AppError('WEBHOOK_PAYLOAD_INVALID', problem.message, problem.details) : problem);
  });
  app.use(resumeLogFieldsMiddleware);
  app.setGlobalPrefix('api');
  app.enableShutdownHooks();
  SwaggerModule.setup(DOCS_PATH.slice(1), app, () => buildOpenApi(app), {
    jsonDocumentUrl: `${DOCS_PATH.slice(1)}/openapi.json`,
    yamlDocumentUrl: `${DOCS_PATH.slice(1)}/openapi.yaml`,
  });
  // Nest answers unknown routes under /api itself; everything else gets the same NOT_FOUND body.
  await app.init();
  const stripeJs = settings.paymentProvider === 'stripe' && settings.stripe?.publishableKey !== undefined;
  for (const handler of serveConsole({ stripeJs })) {
    app.use(handler);
  }
  app.use((req: Request, res: Response) => {
    writeAppError(res, new AppError('NOT_FOUND', `No route for ${req.method} ${req.originalUrl.split('?')[0]}`));
  });
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
