import { Ajv } from 'ajv';
import { AppError } from '../common/app-error.js';
import { ajvProblems, type ManifestTool } from './manifest.js';

// A tool's input, checked against its input_schema before any call (agentsite sites).

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
