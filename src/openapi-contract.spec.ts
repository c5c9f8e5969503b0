import { type INestApplication, Module, type Type } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { getDataSourceToken } from '@nestjs/typeorm';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdminController } from './admin/admin.controller.js';
import { AuthController, MeController } from './auth/auth.controller.js';
import { ConsoleSessions } from './auth/console-session.js';
import { AuthService } from './auth/auth.service.js';
import { ADMIN_ONLY, IS_PUBLIC, TERMS_REQUIRED } from './auth/decorators.js';
import { BillingController } from './billing/billing.controller.js';
import { BillingService } from './billing/billing.service.js';
import { TierOverrideService } from './billing/tier-override.service.js';
import { NO_RATE_LIMIT } from './common/rate-limit.js';
import { SETTINGS } from './config/settings.module.js';
import { AboutController } from './health/about.controller.js';
import { HealthController } from './health/health.controller.js';
import { ReadinessService } from './health/readiness.service.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { MetricsService } from './metrics/metrics.service.js';
import { TEMPORAL_CONNECTION } from './temporal/temporal.module.js';
import { TemporalCodecController } from './temporal-codec/temporal-codec.controller.js';
import { TemporalCodecService } from './temporal-codec/temporal-codec.service.js';
import { UsersService } from './users/users.service.js';
import { InvitationsController } from './workspaces/invitations.controller.js';
import { WorkspacesController } from './workspaces/workspaces.controller.js';
import { WorkspacesService } from './workspaces/workspaces.service.js';

/**
 * The OpenAPI document describes every route's answers: its success status (the one Nest answers)
 * with a schema, and the error body for the codes its guards and code can give. The document is
 * built from the controllers alone (their services stubbed: only their decorators are read).
 */
const CONTROLLERS: Type[] = [
  AuthController,
  MeController,
  AdminController,
  BillingController,
  WorkspacesController,
  InvitationsController,
  HealthController,
  AboutController,
  TemporalCodecController,
  MetricsController,
];

interface Media {
  schema?: {
    $ref?: string;
    type?: string;
    allOf?: Array<{ $ref?: string; properties?: { code?: { enum?: string[] } } }>;
  };
}
interface Response {
  description: string;
  content?: Record<string, Media>;
}
interface Operation {
  operationId: string;
  responses: Record<string, Response>;
}
interface SchemaObject {
  properties?: Record<string, unknown>;
  required?: string[];
}

const stub = (token: unknown) => ({ provide: token as string, useValue: {} });

@Module({
  controllers: CONTROLLERS,
  providers: [
    AuthService,
    ConsoleSessions,
    UsersService,
    BillingService,
    TierOverrideService,
    WorkspacesService,
    TemporalCodecService,
    ReadinessService,
    MetricsService,
    getDataSourceToken(),
    TEMPORAL_CONNECTION,
    SETTINGS,
  ].map(stub),
})
class ContractModule {}

/** The status Nest answers on success: @HttpCode, else 201 for POST and 200 for the rest. */
function successStatus(handler: object): number {
  const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
  if (code !== undefined) {
    return code;
  }
  return Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.POST ? 201 : 200;
}

function flag(key: symbol, controller: Type, handler: object): boolean {
  return Reflect.getMetadata(key, handler) === true || Reflect.getMetadata(key, controller) === true;
}

/** The codes a response declares (ApiErrors narrows ErrorBodyDto's `code` to them). */
function codesOf(response: Response | undefined): string[] {
  const schema = response?.content?.['application/json']?.schema;
  if (schema?.allOf?.[0]?.$ref !== '#/components/schemas/ErrorBodyDto') {
    return [];
  }
  return schema.allOf[1]?.properties?.code?.enum ?? [];
}

/** One operation's answers, against what the handler's code and guards do. */
function checkOperation(op: Operation, controller: Type, handler: object, schemas: Record<string, SchemaObject>): void {
  const responses = op.responses;
  const status = successStatus(handler);
  const success = responses[String(status)];
  expect(success).toBeDefined();
  // Only the declared success status: no stray 200 next to a 201 or 204.
  expect(Object.keys(responses).filter((s) => s.startsWith('2'))).toEqual([String(status)]);
  if (status === 204) {
    expect(success!.content).toBeUndefined();
  } else {
    const media = Object.values(success!.content ?? {});
    expect(media.length).toBeGreaterThan(0);
    for (const { schema } of media) {
      expect(schema?.$ref ?? schema?.type).toBeDefined();
      if (schema?.$ref !== undefined) {
        expect(schemas[schema.$ref.replace('#/components/schemas/', '')]?.properties).toBeDefined();
      }
    }
  }
  const errors = Object.keys(responses).filter((s) => Number(s) >= 400);
  expect(errors.length).toBeGreaterThan(0);
  for (const s of errors) {
    // The error body, with its codes; only health's 503 answers something else (its report).
    const schema = responses[s]?.content?.['application/json']?.schema;
    expect(codesOf(responses[s]).length > 0 || schema?.$ref !== undefined).toBe(true);
  }
  const declared = errors.flatMap((s) => codesOf(responses[s]));
  if (!flag(NO_RATE_LIMIT, controller, handler)) {
    expect(declared).toContain('RATE_LIMITED');
  }
  if (!flag(IS_PUBLIC, controller, handler)) {
    expect(declared).toEqual(
      expect.arrayContaining(['UNAUTHORIZED', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'TOKEN_REVOKED']),
    );
  }
  if (flag(TERMS_REQUIRED, controller, handler)) {
    expect(declared).toContain('TERMS_NOT_ACCEPTED');
  }
  if (flag(ADMIN_ONLY, controller, handler)) {
    expect(declared).toContain('ADMIN_REQUIRED');
  }
}

describe('the OpenAPI document of the account, admin, billing, workspace, health, metrics and codec routes', () => {
  let app: INestApplication;
  let operations: Map<string, Operation>;
  let schemas: Record<string, SchemaObject>;
  const routes = CONTROLLERS.flatMap((controller) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((name) => ({ controller, name, handler: controller.prototype[name] as object }))
      .filter(({ name, handler }) => name !== 'constructor' && Reflect.hasMetadata(METHOD_METADATA, handler)),
  );

  beforeAll(async () => {
    app = await NestFactory.create(ContractModule, new FastifyAdapter(), { logger: false });
    const doc = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    operations = new Map(
      Object.values(doc.paths).flatMap((item) =>
        Object.values(item as Record<string, Operation>)
          .filter((op) => typeof op === 'object' && 'operationId' in op)
          .map((op) => [op.operationId, op] as const),
      ),
    );
    schemas = (doc.components?.schemas ?? {}) as Record<string, SchemaObject>;
  });
  afterAll(async () => {
    await app.close();
  });

  it('has the routes', () => {
    expect(routes.length).toBeGreaterThan(20);
  });

  it.each(routes.map((r) => [`${r.controller.name}.${r.name}`, r] as const))(
    '%s declares its success answer with a schema, and its error answers',
    (_label, { controller, name, handler }) => {
      // An operation of several paths (the codec's preflight) has one id per path: each is checked.
      const ids = [...operations.keys()].filter(
        (id) => id === `${controller.name}_${name}` || id.startsWith(`${controller.name}_${name}[`),
      );
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) {
        checkOperation(operations.get(id)!, controller, handler, schemas);
      }
    },
  );

  it('marks the nullable fields and the required ones as the code answers them', () => {
    const user = schemas['UserResponseDto']!;
    expect(user.required?.sort()).toEqual(
      ['acceptedTermsAt', 'createdAt', 'credits', 'email', 'id', 'name', 'role', 'subscriptionStatus', 'tier'].sort(),
    );
    expect(user.properties?.['name']).toMatchObject({ nullable: true });
    expect(user.properties?.['acceptedTermsAt']).toMatchObject({ nullable: true, format: 'date-time' });
    expect(schemas['BillingResponseDto']!.properties?.['paymentMethod']).toMatchObject({
      type: 'object',
      nullable: true,
    });
    expect(schemas['Tier']).toMatchObject({ enum: ['free', 'pro', 'harness', 'team'] });
  });

  it('declares the operations routes: metrics as Prometheus text for operators, readiness 200 and 503 with its reasons', () => {
    const metrics = operations.get('MetricsController_scrape')!;
    expect(Object.keys(metrics.responses['200']!.content!)).toEqual(['text/plain']);
    expect(metrics.responses['200']!.content!['text/plain']!.schema).toMatchObject({ type: 'string' });
    expect(Object.keys(metrics.responses).flatMap((s) => codesOf(metrics.responses[s]))).toEqual(
      expect.arrayContaining(['UNAUTHORIZED', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'ADMIN_REQUIRED']),
    );
    const ready = operations.get('HealthController_ready')!;
    for (const status of ['200', '503']) {
      expect(ready.responses[status]!.content!['application/json']!.schema!.$ref).toBe(
        '#/components/schemas/ReadinessDto',
      );
    }
    expect(schemas['ReadinessDto']!.required?.sort()).toEqual(['reasons', 'status']);
    expect(operations.get('HealthController_live')!.responses['200']).toBeDefined();
  });
});
