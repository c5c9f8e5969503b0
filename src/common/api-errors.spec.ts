import { Controller, Get, type INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ApiCreatedResponse, ApiOkResponse, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiErrors, ApiWorkspaceHeader } from './api-errors.js';

@ApiWorkspaceHeader()
@ApiErrors('UNAUTHORIZED', 'RATE_LIMITED')
@Controller('things')
class ThingsController {
  @ApiOkResponse({ type: [String] })
  @Get()
  list(): string[] {
    return [];
  }

  @ApiErrors('INVALID_TOKEN', 'NOT_FOUND')
  @ApiErrors('VALIDATION_ERROR')
  @ApiCreatedResponse({ type: String })
  @Post()
  create(): string {
    return '';
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

interface Response {
  description: string;
  content: { 'application/json': { schema: { allOf: Array<{ $ref?: string; properties?: unknown }> } } };
}
type Operation = { responses: Record<string, Response>; parameters?: Array<{ name: string; in: string }> };

describe('ApiErrors', () => {
  let app: INestApplication;
  let paths: Record<string, Record<string, Operation>>;
  let schemas: Record<string, { properties: Record<string, unknown>; required: string[]; enum?: string[] }>;

  beforeAll(async () => {
    app = await NestFactory.create(ThingsModule, new FastifyAdapter(), { logger: false });
    const doc = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    paths = doc.paths as never;
    schemas = doc.components?.schemas as never;
  });
  afterAll(async () => {
    await app.close();
  });

  const codesOf = (response: Response): unknown =>
    response.content['application/json'].schema.allOf[1]?.properties as unknown;

  it('declares one response per status, listing its codes, on every route of a controller', () => {
    const list = paths['/things']!['get']!.responses;
    expect(Object.keys(list).sort()).toEqual(['200', '401', '403', '404', '429']);
    expect(list['401']!.description).toBe('`UNAUTHORIZED`');
    expect(list['404']!.description).toBe('`WORKSPACE_NOT_FOUND`');
    expect(list['403']!.description).toBe('`WORKSPACE_REQUIRED`');
    expect(list['429']!.content['application/json'].schema.allOf[0]).toEqual({
      $ref: '#/components/schemas/ErrorBodyDto',
    });
    expect(codesOf(list['429']!)).toEqual({ code: { type: 'string', enum: ['RATE_LIMITED'] } });
  });

  it("adds a route's own codes to the controller's, per status", () => {
    const create = paths['/things']!['post']!.responses;
    expect(Object.keys(create).sort()).toEqual(['201', '400', '401', '403', '404', '429']);
    expect(codesOf(create['401']!)).toEqual({
      code: { type: 'string', enum: ['INVALID_TOKEN', 'UNAUTHORIZED'] },
    });
    expect(codesOf(create['404']!)).toEqual({ code: { type: 'string', enum: ['NOT_FOUND', 'WORKSPACE_NOT_FOUND'] } });
    expect(create['400']!.description).toBe('`VALIDATION_ERROR`');
  });

  it('documents the X-Workspace-Id header and the error body schema', () => {
    const header = paths['/things']!['get']!.parameters?.find((p) => p.in === 'header');
    expect(header).toMatchObject({ name: 'X-Workspace-Id', in: 'header', required: false });
    const body = schemas['ErrorBodyDto']!;
    expect(body.required.sort()).toEqual(['code', 'error', 'statusCode']);
    expect(body.properties['code']).toMatchObject({ allOf: [{ $ref: '#/components/schemas/ErrorCode' }] });
    expect(schemas['ErrorCode']!.enum).toEqual(expect.arrayContaining(['VALIDATION_ERROR', 'INTERNAL_ERROR']));
  });
});
