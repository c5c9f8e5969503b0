import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError } from '../common/app-error.js';
import { ajvProblems, type ManifestTool } from '../sites/manifest.js';

// An MCP tool's input, checked against the server's JSON Schema before any call, without the server's
// regular expressions: a catastrophic `pattern` (ReDoS) would otherwise run on our CPU against the
// user's or the model's input. The server checks its own patterns.

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateSchema: false }));

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to schemas (the names are data, never keywords). */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/**
 * The schema without `pattern`, `patternProperties` and `format: "regex"`, at every depth where a
 * schema stands (not in `enum`, `const`, `default` or property names). Where `patternProperties` is
 * dropped, `additionalProperties` and `unevaluatedProperties` go too: the properties the patterns
 * admitted must stay admitted. Only ever looser than the server's schema.
 */
export function withoutPatterns(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > 64) {
    return typeof schema === 'boolean' ? schema : depth > 64 ? {} : schema;
  }
  const source = schema as Record<string, unknown>;
  const loosened = source.patternProperties !== undefined;
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(source)) {
    if (keyword === 'pattern' || keyword === 'patternProperties' || (keyword === 'format' && value === 'regex')) {
      continue;
    }
    if (loosened && (keyword === 'additionalProperties' || keyword === 'unevaluatedProperties')) {
      continue;
    }
    if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((s) => withoutPatterns(s, depth + 1));
    } else if (SCHEMA_KEYWORDS.has(keyword)) {
      out[keyword] = withoutPatterns(value, depth + 1);
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && typeof value === 'object' && value !== null) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [name, Array.isArray(s) ? s : withoutPatterns(s, depth + 1)]),
      );
    } else {
      out[keyword] = value;
    }
  }
  return out;
}

/** Compiled checks by schema text, oldest first: at most this many, and at most this many bytes of schema. */
const MAX_VALIDATORS = 500;
const MAX_CACHED_BYTES = 8 * 1024 * 1024;
const validators = new Map<string, { validate: ValidateFunction; compiled: object }>();
let cachedBytes = 0;

function remember(key: string, entry: { validate: ValidateFunction; compiled: object }): void {
  validators.set(key, entry);
  cachedBytes += key.length;
  for (const [oldKey, old] of validators) {
    if (validators.size <= MAX_VALIDATORS && cachedBytes <= MAX_CACHED_BYTES) {
      break;
    }
    validators.delete(oldKey);
    cachedBytes -= oldKey.length;
    ajv.removeSchema(old.compiled); // ajv keeps its own cache of compiled schemas, by schema object
  }
}

function validatorOf(tool: ManifestTool): ValidateFunction {
  const key = JSON.stringify(tool.input_schema);
  const cached = validators.get(key);
  if (cached !== undefined) {
    return cached.validate;
  }
  const { $schema: _ignored, $id: _id, ...schema } = withoutPatterns(tool.input_schema) as Record<string, unknown>;
  let compiled: object = schema;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(compiled);
  } catch {
    compiled = { type: 'object' }; // a schema ajv cannot compile: the server checks it
    validate = ajv.compile(compiled);
  }
  remember(key, { validate, compiled });
  return validate;
}

/** The number of compiled checks kept (for tests of the bound). */
export function cachedMcpValidators(): number {
  return validators.size;
}

/** VALIDATION_ERROR naming each field of `input` that does not fit the MCP tool's JSON Schema (patterns aside). */
export function validateMcpInput(tool: ManifestTool, input: unknown): void {
  const validate = validatorOf(tool);
  if (!validate(input ?? {})) {
    throw AppError.validation(
      ajvProblems(validate.errors, 'input'),
      `Input does not match the input schema of ${tool.name}`,
    );
  }
}
