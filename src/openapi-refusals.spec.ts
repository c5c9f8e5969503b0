import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApi } from './app.factory.js';
import { AppModule } from './app.module.js';
import { encodeCursor, KEYSET_CURSOR } from './common/pagination.js';
import { loadSettings } from './config/settings.js';
import { encodeLedgerCursor, LEDGER_CURSOR } from './credits/ledger-entry.js';

/**
 * The document says what the server refuses, so a client generated from it never sends a request
 * that is refused: request bodies are closed (the validation pipe refuses unknown properties),
 * cursors and tokens carry the pattern the server checks, ids are UUIDs, limits integers within
 * bounds, and every success answer with a body has a schema. Built from the application's own
 * modules in Nest's preview mode, with the document the service serves (buildOpenApi).
 */

interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
}
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function operationsOf(doc: OpenAPIObject): Array<{ label: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, op })),
  );
}

/** Every object schema with declared properties a request body can hold, by where it sits. */
function bodyObjectSchemas(doc: OpenAPIObject, schema: Schema | undefined, at: string, seen = new Set<Schema>()) {
  const out: Array<{ at: string; schema: Schema }> = [];
  const components = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  const walk = (s: Schema | undefined, where: string): void => {
    if (s === undefined) {
      return;
    }
    if (s.$ref !== undefined) {
      const name = s.$ref.split('/').pop()!;
      walk(components[name], `${where}>${name}`);
      return;
    }
    if (seen.has(s)) {
      return;
    }
    seen.add(s);
    for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
      walk(part, where);
    }
    walk(s.items, `${where}[]`);
    if (s.properties !== undefined) {
      out.push({ at: where, schema: s });
      for (const [key, property] of Object.entries(s.properties)) {
        walk(property, `${where}.${key}`);
      }
    }
  };
  walk(schema, at);
  return out;
}

describe('the OpenAPI document declares what the server refuses', () => {
  let app: INestApplication;
  let doc: OpenAPIObject;
  let operations: Array<{ label: string; op: Operation }>;

  beforeAll(async () => {
    const settings = loadSettings({
      JWT_SECRET: 'openapi-refusals-spec-secret-0123456789abcdef',
      VAULT_KEY: Buffer.alloc(32, 9).toString('base64'),
    });
    app = await NestFactory.create(AppModule.forRoot(settings), new FastifyAdapter(), { preview: true, logger: false });
    app.setGlobalPrefix('api');
    doc = buildOpenApi(app);
    operations = operationsOf(doc);
  });

  afterAll(async () => {
    await app.close();
  });

  it('closes every object schema a request body holds (nested DTOs too) with additionalProperties: false', () => {
    const objects = operations.flatMap(({ label, op }) =>
      Object.entries(op.requestBody?.content ?? {}).flatMap(([type, media]) =>
        bodyObjectSchemas(doc, media.schema, `${label} ${type}`),
      ),
    );
    // The DTOs of register, login, agents (their trigger and its fields), chat, workspaces, the codec…
    expect(objects.length).toBeGreaterThan(30);
    const open = objects.filter(({ schema }) => schema.additionalProperties !== false).map(({ at }) => at);
    expect(open).toEqual([]);
  });

  it('gives every cursor and token parameter the pattern the server checks', () => {
    const unpatterned = operations.flatMap(({ label, op }) =>
      (op.parameters ?? [])
        .filter((p) => /cursor|token/i.test(p.name) && p.schema?.pattern === undefined)
        .map((p) => `${label} ${p.in} ${p.name}`),
    );
    expect(unpatterned).toEqual([]);
    const cursors = operations.flatMap(({ op }) => (op.parameters ?? []).filter((p) => p.name === 'cursor'));
    expect(cursors.length).toBeGreaterThanOrEqual(7);
    const tokens = operations.flatMap(({ op }) => (op.parameters ?? []).filter((p) => p.name === 'token'));
    expect(tokens.length).toBe(3);
  });

  it('declares cursor patterns that the cursors the server hands out match, and garbage does not', () => {
    const keyset = encodeCursor({
      at: new Date('2026-11-26T10:00:00.123Z'),
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    });
    const ledger = encodeLedgerCursor('9007199254740993');
    const ledgerList = operations.find(({ label }) => label === 'GET /api/billing/ledger')!.op;
    const agentList = operations.find(({ label }) => label === 'GET /api/agents')!.op;
    const patternOf = (op: Operation) => new RegExp(op.parameters!.find((p) => p.name === 'cursor')!.schema!.pattern!);
    expect(patternOf(agentList).source).toBe(KEYSET_CURSOR.source);
    expect(patternOf(ledgerList).source).toBe(LEDGER_CURSOR.source);
    expect(patternOf(agentList).test(keyset)).toBe(true);
    expect(patternOf(ledgerList).test(ledger)).toBe(true);
    for (const garbage of [
      'nope',
      '',
      'bm90LWEtY3Vyc29y',
      '1.0f8fad5b',
      `${'9'.repeat(16)}.0f8fad5b-d9cb-469f-a165-70867728950e`,
    ]) {
      expect(patternOf(agentList).test(garbage)).toBe(false);
    }
    for (const garbage of ['0', '-1', '1'.repeat(19), 'abc']) {
      expect(patternOf(ledgerList).test(garbage)).toBe(false);
    }
  });

  it('declares path ids as UUIDs and every limit as an integer from 1 to 200', () => {
    const params = operations.flatMap(({ label, op }) => (op.parameters ?? []).map((p) => ({ label, p })));
    const ids = params.filter(({ p }) => p.in === 'path' && /^(id|[a-z]+Id)$/.test(p.name));
    expect(ids.length).toBeGreaterThan(30);
    expect(ids.filter(({ p }) => p.schema?.format !== 'uuid').map(({ label, p }) => `${label} ${p.name}`)).toEqual([]);
    const limits = params.filter(({ p }) => p.name === 'limit');
    expect(limits.length).toBeGreaterThanOrEqual(7);
    for (const { p } of limits) {
      expect(p.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
    }
  });

  it('declares a schema for every success answer with a body (all but 204 and redirects)', () => {
    const missing = operations.flatMap(({ label, op }) =>
      Object.entries(op.responses)
        .filter(([status]) => status.startsWith('2') && status !== '204')
        .flatMap(([status, response]) => {
          const media = Object.entries(response.content ?? {});
          if (media.length === 0) {
            return [`${label} ${status} (no content)`];
          }
          return media
            .filter(
              ([, m]) => m.schema === undefined || (m.schema.$ref ?? m.schema.type ?? m.schema.anyOf) === undefined,
            )
            .map(([type]) => `${label} ${status} ${type}`);
        }),
    );
    expect(missing).toEqual([]);
  });

  it('declares each header parameter once (header names are case-insensitive)', () => {
    for (const { label, op } of operations) {
      const headers = (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
      expect({ label, headers: [...new Set(headers)] }).toEqual({ label, headers });
    }
  });
});
