import { Ajv, type ValidateFunction } from 'ajv';
import { AppError } from '../common/app-error.js';
import { ajvProblems } from '../sites/manifest.js';
import { jsonDepth, nulCharacterPath } from '../common/json-depth.js';
import type { WebhookField } from '../agents/agent.entity.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const cache = new Map<string, ValidateFunction>();
const MAX_CACHED = 1000;

/** The JSON Schema of an agent's webhook payload, built from its field list. Other fields are allowed. */
export function payloadSchema(fields: WebhookField[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f.name, { type: f.type }])),
    required: fields.filter((f) => f.required).map((f) => f.name),
    additionalProperties: true,
  };
}

/** Deepest nesting a payload may have (deeper ones are refused before anything walks them recursively). */
export const MAX_PAYLOAD_DEPTH = 32;

/** WEBHOOK_PAYLOAD_INVALID naming each field that does not fit the schema. */
export function validatePayload(fields: WebhookField[], payload: unknown): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new AppError('WEBHOOK_PAYLOAD_INVALID', 'The payload must be a JSON object', [
      { field: 'body', message: 'must be a JSON object' },
    ]);
  }
  if (jsonDepth(payload, MAX_PAYLOAD_DEPTH + 1) > MAX_PAYLOAD_DEPTH) {
    throw new AppError('WEBHOOK_PAYLOAD_INVALID', `The payload is nested deeper than ${MAX_PAYLOAD_DEPTH} levels`, [
      { field: 'body', message: `nested deeper than ${MAX_PAYLOAD_DEPTH} levels` },
    ]);
  }
  const nul = nulCharacterPath(payload);
  if (nul !== undefined) {
    throw new AppError('WEBHOOK_PAYLOAD_INVALID', 'The payload contains a NUL character (U+0000)', [
      { field: nul, message: 'must not contain a NUL character (U+0000)' },
    ]);
  }
  const schema = payloadSchema(fields);
  const key = JSON.stringify(schema);
  let validate = cache.get(key);
  if (validate === undefined) {
    if (cache.size >= MAX_CACHED) {
      cache.clear();
    }
    validate = ajv.compile(schema);
    cache.set(key, validate);
  }
  if (!validate(payload)) {
    throw new AppError(
      'WEBHOOK_PAYLOAD_INVALID',
      "The payload does not match the agent's webhook schema",
      ajvProblems(validate.errors),
    );
  }
  return payload as Record<string, unknown>;
}
