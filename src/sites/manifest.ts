import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError, type FieldProblem } from '../common/app-error.js';
import { SITE_SCOPES } from './scopes.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface ManifestProperty {
  type: string;
  description?: string;
  enum?: unknown[];
  [keyword: string]: unknown;
}

export interface ManifestTool {
  name: string;
  description: string;
  scope?: string;
  input_schema: {
    type: 'object';
    properties: Record<string, ManifestProperty>;
    required?: string[];
  };
}

export interface Manifest {
  name: string;
  version: string;
  description: string;
  server: { url: string };
  auth: { type: 'bearer' } | { type: 'oauth2'; authorization_url: string; token_url: string; scopes: string[] };
  tools: ManifestTool[];
}

const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
const httpsUrl = { type: 'string', format: 'uri', pattern: '^https://', maxLength: 2048 };

/** The manifest format of the specification, as a JSON Schema (validated by ajv, never by hand). */
export const MANIFEST_SCHEMA = {
  $id: 'agentsite-manifest',
  type: 'object',
  required: ['name', 'version', 'description', 'server', 'auth', 'tools'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    version: { type: 'string', minLength: 1, maxLength: 64 },
    description: { type: 'string', maxLength: 5000 },
    server: {
      type: 'object',
      required: ['url'],
      properties: { url: httpsUrl },
    },
    auth: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['bearer', 'oauth2'] },
        authorization_url: httpsUrl,
        token_url: httpsUrl,
        scopes: { type: 'array', items: { enum: [...SITE_SCOPES] }, uniqueItems: true },
      },
      if: { properties: { type: { const: 'oauth2' } } },
      then: { required: ['authorization_url', 'token_url', 'scopes'] },
    },
    tools: {
      type: 'array',
      minItems: 1,
      maxItems: 200,
      items: {
        type: 'object',
        required: ['name', 'description', 'input_schema'],
        properties: {
          // Used as the last path segment of the tool endpoint, and as a model tool name.
          name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          description: { type: 'string', minLength: 1, maxLength: 5000 },
          scope: { enum: [...SITE_SCOPES] },
          input_schema: {
            type: 'object',
            required: ['type', 'properties'],
            properties: {
              type: { const: 'object' },
              properties: {
                type: 'object',
                maxProperties: 100,
                additionalProperties: {
                  type: 'object',
                  required: ['type'],
                  properties: {
                    type: { enum: JSON_TYPES },
                    description: { type: 'string', maxLength: 5000 },
                    enum: { type: 'array', minItems: 1, maxItems: 1000 },
                  },
                },
              },
              required: { type: 'array', items: { type: 'string' }, uniqueItems: true },
            },
          },
        },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validateManifestSchema = ajv.compile(MANIFEST_SCHEMA);

/** `/tools/0/input_schema` → `tools[0].input_schema`. */
export function pointerToField(pointer: string, root = ''): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = root;
  for (const part of parts) {
    field = /^\d+$/.test(part) ? `${field}[${part}]` : field === '' ? part : `${field}.${part}`;
  }
  return field;
}

export function ajvProblems(errors: ErrorObject[] | null | undefined, root = ''): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const error of errors ?? []) {
    if (error.keyword === 'if') {
      continue; // the `then` branch's own error says what is missing
    }
    let field = pointerToField(error.instancePath, root);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      field = field === '' ? missing : `${field}.${missing}`;
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      field = field === '' ? extra : `${field}.${extra}`;
      message = 'is not allowed';
    }
    const key = `${field}|${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push({ field: field || root || 'body', message });
    }
  }
  return problems;
}

/** Validates a parsed manifest; MANIFEST_INVALID with a `details` entry for each bad field. */
export function validateManifest(json: unknown): Manifest {
  const problems: FieldProblem[] = [];
  if (!validateManifestSchema(json)) {
    problems.push(...ajvProblems(validateManifestSchema.errors));
  } else {
    // What JSON Schema cannot say: unique tool names, and `required` naming declared properties.
    const manifest = json as unknown as Manifest;
    const names = new Set<string>();
    manifest.tools.forEach((tool, index) => {
      if (names.has(tool.name)) {
        problems.push({ field: `tools[${index}].name`, message: `duplicates the tool name "${tool.name}"` });
      }
      names.add(tool.name);
      (tool.input_schema.required ?? []).forEach((name, r) => {
        if (!(name in tool.input_schema.properties)) {
          problems.push({
            field: `tools[${index}].input_schema.required[${r}]`,
            message: `names no property "${name}"`,
          });
        }
      });
    });
  }
  if (problems.length > 0) {
    throw new AppError('MANIFEST_INVALID', 'The manifest is malformed or lacks required fields', problems);
  }
  return json as unknown as Manifest;
}

/** Keywords of a property schema that input validation honours (a safe subset: no regex patterns). */
const INPUT_KEYWORDS = new Set([
  'type',
  'enum',
  'description',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
]);

function sanitize(schema: unknown, depth = 0): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || depth > 8) {
    return {};
  }
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (INPUT_KEYWORDS.has(keyword)) {
      out[keyword] = value;
    } else if (keyword === 'items') {
      out.items = sanitize(value, depth + 1);
    } else if (keyword === 'properties' && typeof value === 'object' && value !== null) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sanitize(v, depth + 1)]));
    } else if (keyword === 'required' && Array.isArray(value)) {
      out.required = value.filter((v) => typeof v === 'string');
    }
  }
  return out;
}

/** Builds the JSON Schema that tool inputs are checked against, from the manifest's input_schema. */
export function inputSchemaOf(tool: ManifestTool): Record<string, unknown> {
  return { ...sanitize(tool.input_schema), type: 'object' };
}

const inputAjv = new Ajv({ allErrors: true, strict: false });
const inputValidators = new Map<string, ReturnType<typeof inputAjv.compile>>();
const MAX_CACHED_VALIDATORS = 2000;

/** VALIDATION_ERROR naming each field of `input` that does not fit the tool's input_schema. */
export function validateToolInput(tool: ManifestTool, input: unknown): void {
  const schema = inputSchemaOf(tool);
  const key = JSON.stringify(schema);
  let validate = inputValidators.get(key);
  if (validate === undefined) {
    if (inputValidators.size >= MAX_CACHED_VALIDATORS) {
      inputValidators.clear();
    }
    validate = inputAjv.compile(schema);
    inputValidators.set(key, validate);
  }
  if (!validate(input)) {
    throw AppError.validation(
      ajvProblems(validate.errors, 'input'),
      `Input does not match the input_schema of ${tool.name}`,
    );
  }
}
