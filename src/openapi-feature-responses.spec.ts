import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type INestApplication, RequestMethod } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AgentsController } from './agents/agents.controller.js';
import { buildOpenApi } from './app.factory.js';
import { AppModule } from './app.module.js';
import { ChatController } from './chat/chat.controller.js';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from './common/error-codes.js';
import { loadSettings } from './config/settings.js';
import { OAuthController } from './oauth/oauth.controller.js';
import { SiteOAuthController } from './oauth/site-oauth.controller.js';
import { AgentRunsController } from './runs/agent-runs.controller.js';
import { RunsController } from './runs/runs.controller.js';
import { SiteToolsController } from './tools/site-tools.controller.js';
import { VaultController } from './vault/vault.controller.js';
import { WebhooksController } from './webhooks/webhooks.controller.js';
import { WORKSPACE_HEADER } from './workspaces/scope.js';

/**
 * The API document describes what the vault, OAuth, tools, agents, runs, webhook and chat routes
 * answer: a success schema per route (with the status the route really answers), and the error body
 * with the codes of each error status. Built from the application's own modules in Nest's preview
 * mode (the module graph without instances: no database is opened).
 */

const CONTROLLERS = [
  VaultController,
  SiteOAuthController,
  OAuthController,
  SiteToolsController,
  AgentsController,
  AgentRunsController,
  RunsController,
  WebhooksController,
  ChatController,
];

const VERBS: Partial<Record<RequestMethod, string>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.DELETE]: 'delete',
};

interface Route {
  name: string;
  verb: string;
  path: string;
  /** The status Nest answers with (@HttpCode, else 201 for POST and 200 otherwise); undefined when the handler writes its own answer (@Res()). */
  status: number | undefined;
}

function routesOf(controller: abstract new (...args: never[]) => unknown): Route[] {
  const base = String(Reflect.getMetadata(PATH_METADATA, controller));
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== 'constructor' && typeof prototype[name] === 'function')
    .filter((name) => Reflect.getMetadata(METHOD_METADATA, prototype[name] as object) !== undefined)
    .map((name) => {
      const handler = prototype[name] as object;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
      const sub = String(Reflect.getMetadata(PATH_METADATA, handler));
      const path = `/api/${[base, sub].filter((p) => p !== '/' && p !== '').join('/')}`.replace(/:(\w+)/g, '{$1}');
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, unknown>;
      const ownAnswer = Object.keys(args).some((key) => key.split(':')[0] === String(RouteParamtypes.RESPONSE));
      const httpCode = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
      const status = ownAnswer ? undefined : (httpCode ?? (method === RequestMethod.POST ? 201 : 200));
      return { name: `${controller.name}.${name}`, verb: VERBS[method]!, path, status };
    });
}

/** The codes a response's description names (whatever words surround them). */
function codesIn(description: string): ErrorCode[] {
  return ERROR_CODES.filter((code) => new RegExp(`\\b${code}\\b`).test(description));
}

interface MediaType {
  schema?: { $ref?: string; type?: string };
}

interface ResponseObject {
  description: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, unknown>;
}

interface Operation {
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, ResponseObject>;
  security?: unknown[];
}

describe('the API document: responses of the vault, OAuth, tools, agents, runs, webhook and chat routes', () => {
  let app: INestApplication;
  let doc: OpenAPIObject;
  const routes = CONTROLLERS.flatMap(routesOf);

  beforeAll(async () => {
    const settings = loadSettings({
      JWT_SECRET: 'openapi-document-spec-secret-0123456789abcdef',
      VAULT_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    app = await NestFactory.create(AppModule.forRoot(settings), new FastifyAdapter(), { preview: true, logger: false });
    app.setGlobalPrefix('api');
    doc = buildOpenApi(app);
  });

  afterAll(async () => {
    await app.close();
  });

  function operation(route: Route): Operation {
    const found = (doc.paths[route.path] as Record<string, Operation> | undefined)?.[route.verb];
    if (found === undefined) {
      throw new Error(`${route.name}: no ${route.verb.toUpperCase()} ${route.path} in the document`);
    }
    return found;
  }

  it('finds every route of these controllers in the document', () => {
    expect(routes.length).toBeGreaterThanOrEqual(28);
    for (const route of routes) {
      expect(() => operation(route)).not.toThrow();
    }
  });

  it('gives each route its success answer, at the status the route answers, with a schema', () => {
    const problems: string[] = [];
    for (const route of routes) {
      const responses = operation(route).responses;
      const successes = Object.keys(responses).filter((status) => /^[23]\d\d$/.test(status));
      if (route.status !== undefined && !successes.includes(String(route.status))) {
        problems.push(`${route.name}: answers ${route.status}, the document says ${successes.join(', ') || 'nothing'}`);
      }
      if (successes.length === 0) {
        problems.push(`${route.name}: no success response`);
      }
      for (const status of successes) {
        const { content, headers } = responses[status]!;
        if (status === '204') {
          continue;
        }
        if (status === '302') {
          if (headers?.Location === undefined) {
            problems.push(`${route.name}: a redirect without its Location header`);
          }
          continue;
        }
        const media = Object.entries(content ?? {});
        if (media.length === 0) {
          problems.push(`${route.name}: ${status} without content`);
        }
        for (const [type, { schema }] of media) {
          if (schema === undefined || (schema.$ref === undefined && schema.type === undefined)) {
            problems.push(`${route.name}: ${status} ${type} without a schema`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('lists the error body and its codes under the status each code answers', () => {
    const problems: string[] = [];
    for (const route of routes) {
      const errors = Object.entries(operation(route).responses).filter(([status]) => /^[45]\d\d$/.test(status));
      if (errors.length === 0) {
        problems.push(`${route.name}: no error response`);
      }
      for (const [status, response] of errors) {
        const schema = response.content?.['application/json']?.schema;
        // The error body itself, or (ApiErrors) the error body with its code narrowed to the listed ones.
        const body = schema?.$ref ?? (schema as { allOf?: Array<{ $ref?: string }> } | undefined)?.allOf?.[0]?.$ref;
        if (body !== '#/components/schemas/ErrorBodyDto') {
          problems.push(`${route.name}: ${status} is not the error body`);
        }
        if (status === '500') {
          // Declared for every operation by buildOpenApi: INTERNAL_ERROR, which is no code of the spec.
          continue;
        }
        const codes = codesIn(response.description);
        if (codes.length === 0) {
          problems.push(`${route.name}: ${status} lists no code`);
        }
        for (const code of codes) {
          if (ERROR_STATUS[code] !== Number(status)) {
            problems.push(`${route.name}: ${code} listed under ${status}`);
          }
        }
        if (status === '429' && response.headers?.['Retry-After'] === undefined) {
          problems.push(`${route.name}: 429 without Retry-After`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('lists the codes of the guards and of the routes themselves', () => {
    const codesOf = (route: Route): string[] =>
      Object.entries(operation(route).responses)
        .filter(([status]) => /^[45]\d\d$/.test(status))
        .flatMap(([, r]) => codesIn(r.description));
    for (const route of routes.filter((r) => operation(r).security !== undefined)) {
      expect(codesOf(route)).toEqual(
        expect.arrayContaining(['UNAUTHORIZED', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'INVALID_TOKEN', 'RATE_LIMITED']),
      );
      expect(codesOf(route)).toEqual(expect.arrayContaining(['TERMS_NOT_ACCEPTED', 'WORKSPACE_NOT_FOUND']));
    }
    const byName = (name: string): Route => routes.find((r) => r.name === name)!;
    expect(codesOf(byName('VaultController.add'))).toEqual(
      expect.arrayContaining(['INVALID_URL', 'MANIFEST_NOT_FOUND', 'MANIFEST_INVALID', 'VAULT_LIMIT_REACHED']),
    );
    expect(codesOf(byName('VaultController.storeToken'))).toContain('TOKEN_EXISTS');
    expect(codesOf(byName('SiteToolsController.call'))).toEqual(
      expect.arrayContaining(['TOOL_EXECUTION_ERROR', 'OUTGOING_RATE_LIMITED']),
    );
    expect(codesOf(byName('AgentRunsController.start'))).toEqual(
      expect.arrayContaining(['AGENT_ALREADY_RUNNING', 'NO_CREDITS', 'AGENT_NOT_FOUND']),
    );
    expect(codesOf(byName('RunsController.cancel'))).toContain('RUN_NOT_CANCELLABLE');
    expect(codesOf(byName('WebhooksController.trigger'))).toEqual(
      expect.arrayContaining(['WEBHOOK_SECRET_INVALID', 'WEBHOOK_PAYLOAD_INVALID', 'TIER_REQUIRED', 'NO_CREDITS']),
    );
    expect(codesOf(byName('ChatController.send'))).toEqual(
      expect.arrayContaining([
        'INVALID_SESSION',
        'SESSION_NOT_FOUND',
        'SESSION_EXPIRED',
        'CHAT_TIMEOUT',
        'MODEL_ERROR',
      ]),
    );
  });

  it('declares X-Workspace-Id on every route that acts on a scope', () => {
    const scoped = routes.filter((r) => operation(r).security !== undefined && r.path !== '/api/oauth/complete');
    expect(scoped.length).toBeGreaterThan(20);
    for (const route of scoped) {
      const headers = (operation(route).parameters ?? [])
        .filter((p) => p.in === 'header')
        .map((p) => p.name.toLowerCase());
      expect([route.name, headers]).toEqual([route.name, expect.arrayContaining([WORKSPACE_HEADER.toLowerCase()])]);
    }
  });

  it('describes the webhook body, its headers, and the SSE events of a chat turn', () => {
    const webhook = operation(routes.find((r) => r.name === 'WebhooksController.trigger')!) as Operation & {
      requestBody?: { content: Record<string, MediaType & { schema: { additionalProperties?: unknown } }> };
    };
    expect(webhook.requestBody?.content['application/json']?.schema).toMatchObject({
      type: 'object',
      additionalProperties: true,
    });
    expect((webhook.parameters ?? []).map((p) => p.name)).toEqual(
      expect.arrayContaining(['X-Webhook-Secret', 'X-Webhook-Delivery-Id']),
    );
    const send = operation(routes.find((r) => r.name === 'ChatController.send')!).responses['200']!;
    const stream = send.content?.['text/event-stream'] as (MediaType & { 'x-sse-events'?: object }) | undefined;
    expect(stream?.schema?.type).toBe('string');
    expect(stream?.['x-sse-events']).toEqual({
      text: { $ref: '#/components/schemas/ChatTextEventDto' },
      tool_call: { $ref: '#/components/schemas/ChatToolCallEventDto' },
      tool_result: { $ref: '#/components/schemas/ChatToolResultEventDto' },
      done: { $ref: '#/components/schemas/ChatDoneEventDto' },
      error: { $ref: '#/components/schemas/ErrorBodyDto' },
      context: { $ref: '#/components/schemas/ChatContextEventDto' },
    });
    expect(send.content?.['application/json']?.schema?.$ref).toBe('#/components/schemas/ChatReplyDto');
  });

  it('resolves every reference of the document', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(50);
    expect([...new Set(refs)].filter((name) => doc.components?.schemas?.[name] === undefined)).toEqual([]);
  });
});
