import { isIP } from 'node:net';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { getDomain } from 'tldts';
import { AppError, type FieldProblem } from '../common/app-error.js';
import type { McpToolAnnotations } from './mcp-state.js';
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
  /** MCP: the tool's display title (its `title`, else `annotations.title`). */
  title?: string;
  description: string;
  scope?: string;
  /** MCP: the tool's annotations as the server sent them (the scope is derived from them). */
  annotations?: McpToolAnnotations;
  input_schema: {
    type: 'object';
    properties: Record<string, ManifestProperty>;
    required?: string[];
    /** MCP tools keep their whole JSON Schema ($defs, additionalProperties, …). */
    [keyword: string]: unknown;
  };
}

export interface OAuthManifestAuth {
  type: 'oauth2';
  authorization_url: string;
  token_url: string;
  scopes: string[];
  /** The authorization server's issuer identifier (RFC 9207 `iss`); default: authorization_url's origin. */
  issuer?: string;
  /** RFC 7009 token revocation endpoint: disconnecting or removing the site revokes its tokens there. */
  revocation_url?: string;
}

export interface Manifest {
  name: string;
  version: string;
  description: string;
  server: { url: string };
  auth: { type: 'bearer' } | OAuthManifestAuth;
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
        issuer: httpsUrl,
        revocation_url: httpsUrl,
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

/**
 * The registrable domain (eTLD+1 by the Public Suffix List, private suffixes such as github.io
 * included, so two tenants of one hosting suffix are two domains) of a URL's host. An IP address is
 * its own domain, and so is a name under no public suffix (localhost).
 */
export function registrableDomain(url: URL): string {
  const host = url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (isIP(host) !== 0) {
    return host;
  }
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

/** Every URL field of a manifest (as far as it is a string), by its field name. */
function urlFields(json: unknown): Array<[field: string, value: string]> {
  const manifest = json as { server?: { url?: unknown }; auth?: Record<string, unknown> } | null;
  const fields: Array<[string, unknown]> = [
    ['server.url', manifest?.server?.url],
    ['auth.authorization_url', manifest?.auth?.authorization_url],
    ['auth.token_url', manifest?.auth?.token_url],
    ['auth.issuer', manifest?.auth?.issuer],
    ['auth.revocation_url', manifest?.auth?.revocation_url],
  ];
  return fields.filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}

/**
 * What the schema cannot say about the URLs: each must parse with the WHATWG URL parser the HTTP
 * client uses (a port of 99999 or a malformed host passes `format: uri` and then throws at call
 * time), use https:// without credentials, and lie within the registrable domain of the site's own
 * address, so a manifest cannot send an honest provider's codes or tokens to another party (mix-up).
 */
export function manifestUrlProblems(json: unknown, siteUrl: string, skip: Set<string> = new Set()): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const siteDomain = registrableDomain(new URL(siteUrl));
  for (const [field, value] of urlFields(json)) {
    if (skip.has(field)) {
      continue;
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      problems.push({ field, message: 'is not a valid URL (host or port)' });
      continue;
    }
    if (url.protocol !== 'https:') {
      problems.push({ field, message: 'must use https://' });
    } else if (url.username !== '' || url.password !== '') {
      problems.push({ field, message: 'must not carry credentials' });
    } else if (registrableDomain(url) !== siteDomain) {
      problems.push({
        field,
        message: `is on ${registrableDomain(url)}, outside the site's registrable domain ${siteDomain}`,
      });
    }
  }
  return problems;
}

/**
 * Validates a parsed manifest fetched for the site at `siteUrl`; MANIFEST_INVALID with a `details`
 * entry for each bad field.
 */
export function validateManifest(json: unknown, siteUrl: string): Manifest {
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
  // URL fields the schema already refused are not reported twice.
  problems.push(...manifestUrlProblems(json, siteUrl, new Set(problems.map((p) => p.field))));
  if (problems.length > 0) {
    throw new AppError('MANIFEST_INVALID', 'The manifest is malformed or lacks required fields', problems);
  }
  return json as unknown as Manifest;
}

/** The issuer an authorization response's `iss` must equal: the declared one, else the authorization server's origin. */
export function expectedIssuer(auth: OAuthManifestAuth): string {
  return auth.issuer ?? new URL(auth.authorization_url).origin;
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

/**
 * The manifests (the objects themselves) already found usable, with the site URL they were checked
 * against: a site served from the API's cache brings the same object to every call, and the answer
 * depends on nothing else (the public suffix list is compiled in).
 */
const usableManifests = new WeakMap<Manifest, string>();

/**
 * Holds a stored manifest to the URL rules of today: a manifest saved before a rule existed must not
 * send a token, a refresh token or a code to another domain (checked before every OAuth start and
 * tool call; a few URL parses, once per manifest object).
 */
export function assertStoredManifestUsable(manifest: Manifest, siteUrl: string): void {
  if (usableManifests.get(manifest) === siteUrl) {
    return;
  }
  const problems = manifestUrlProblems(manifest, siteUrl);
  if (problems.length > 0) {
    throw new AppError(
      'MANIFEST_INVALID',
      'The stored manifest of this site has URLs that are no longer accepted; refresh the manifest',
      problems,
    );
  }
  usableManifests.set(manifest, siteUrl);
}
