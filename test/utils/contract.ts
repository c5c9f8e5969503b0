import { Ajv2019, type ErrorObject, type ValidateFunction } from 'ajv/dist/2019.js';
import addFormatsModule from 'ajv-formats';

/**
 * The response contract check: one answer of the service (method, path, status, content type, body)
 * against the OpenAPI document the service itself serves. Pure: the recorder that feeds it the
 * answers of the e2e suites is test/setup/contract-setup.ts.
 *
 * The document is OpenAPI 3.0 (@nestjs/swagger): its schemas are turned into JSON Schema (2019-09,
 * for `unevaluatedProperties`) before Ajv sees them:
 * - `nullable: true` becomes a `null` type (Ajv's own `nullable` support refuses a schema without
 *   `type`, and @nestjs/swagger writes `nullable` beside `$ref` and `allOf`);
 * - every object schema that lists its properties refuses undocumented ones (`additionalProperties:
 *   false`), so a field the code adds without the document is caught; a free object (no properties,
 *   or `additionalProperties` of its own) stays free. Composed schemas (allOf/oneOf/anyOf) are closed
 *   once, at the composition, with `unevaluatedProperties: false`: closing each part would make every
 *   part refuse the others' properties. Their `$ref` parts point to an "open" copy of the component.
 */

// ajv-formats is CommonJS: its default export is the function under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2019) => Ajv2019;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = { [key: string]: Json };

interface MediaType {
  schema?: SchemaObject;
}

interface ResponseObject {
  description?: string;
  content?: Record<string, MediaType>;
}

interface Operation {
  responses?: Record<string, ResponseObject>;
}

export interface ContractDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, SchemaObject> };
}

/** One answer of the service, as a test received it. */
export interface Answer {
  method: string;
  /** The request path as sent (query string allowed). */
  path: string;
  status: number;
  /** The Content-Type header, or undefined when there is none. */
  contentType: string | undefined;
  /** The body as text; undefined when it was not read (a stream: status and content type only). */
  text: string | undefined;
}

/**
 * - `ok`: the answer conforms to what the document declares for it;
 * - `violation`: it breaks what the document declares (unknown route, content type, body): always a failure;
 * - `undeclared`: the document declares nothing to check it against (status not listed, no schema):
 *   a failure in strict mode only;
 * - `excluded`: not part of the API contract (the document itself, pages outside /api);
 * - `unchecked`: the service was gone before its document could be read (a process the test
 *   stopped right after the answer): counted in the summary, never a failure.
 */
export type Verdict = 'ok' | 'violation' | 'undeclared' | 'excluded' | 'unchecked';

export interface Finding {
  verdict: Verdict;
  /** `GET /api/agents/{id} 200`: the operation (its path template) and the status. */
  key: string;
  message: string;
}

export type ContractMode = 'strict' | 'declared-only';

/** CONTRACT_CHECK: `strict` (the default) or `declared-only` (undeclared answers are summarised, not failed). */
export function contractMode(env: NodeJS.ProcessEnv = process.env): ContractMode {
  const value = env.CONTRACT_CHECK;
  if (value === undefined || value === '' || value === 'strict') {
    return 'strict';
  }
  if (value === 'declared-only') {
    return 'declared-only';
  }
  throw new Error(`CONTRACT_CHECK must be "strict" or "declared-only", not ${JSON.stringify(value)}`);
}

export function fails(finding: Finding, mode: ContractMode): boolean {
  return finding.verdict === 'violation' || (finding.verdict === 'undeclared' && mode === 'strict');
}

/**
 * What every error of the service answers (src/common/app-error.ts ErrorBody; the document's
 * description says so): checked for refusals of requests no route of the document takes.
 */
const ERROR_BODY: SchemaObject = {
  type: 'object',
  required: ['error', 'code', 'statusCode'],
  properties: {
    error: { type: 'string' },
    code: { type: 'string' },
    statusCode: { type: 'integer' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

const DOC_ID = 'openapi.json';
const COMPONENT_PREFIX = '#/components/schemas/';

function isObject(value: Json | undefined): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase() || undefined;
}

function isJson(mediaType: string | undefined): boolean {
  return mediaType === 'application/json' || (mediaType?.endsWith('+json') ?? false);
}

function jsonPointerEscape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The document's schemas as Ajv validators, with the route matching. */
export class Contract {
  private readonly ajv = addFormats(new Ajv2019({ strict: false, allErrors: true, validateFormats: true }));
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: Array<{ template: string; pattern: RegExp; params: number; literal: number }>;

  constructor(readonly doc: ContractDocument) {
    const components = doc.components?.schemas ?? {};
    const closed: SchemaObject = {};
    const open: SchemaObject = {};
    for (const [name, schema] of Object.entries(components)) {
      closed[name] = this.convert(schema, false);
      open[name] = this.convert(schema, true);
    }
    this.ajv.addSchema({ $id: DOC_ID, components: { schemas: closed }, $defs: { open } } as object);
    this.routes = Object.keys(doc.paths)
      .map((template) => {
        const parts = template.split(/\{[^}/]+\}/);
        const source = parts.map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
        return {
          template,
          // Express routes as the service does: case-insensitive, a trailing slash allowed.
          pattern: new RegExp(`^${source}/?$`, 'i'),
          params: parts.length - 1,
          literal: parts.join('').length,
        };
      })
      // A literal segment wins over a parameter: /api/agents/templates before /api/agents/{id}.
      .sort((a, b) => a.params - b.params || b.literal - a.literal);
    // Every declared JSON schema compiles now: a construct the conversion misses fails the first
    // answer of the run, naming the operation, rather than passing unchecked.
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          for (const [mediaType, media] of Object.entries(response.content ?? {})) {
            if (media.schema !== undefined && isJson(mediaType)) {
              this.validator(this.pointer(template, method, status, mediaType), media.schema);
            }
          }
        }
      }
    }
  }

  /** The path templates of the document that match a request path, best first. */
  match(pathname: string): string[] {
    return this.routes.filter((route) => route.pattern.test(pathname)).map((route) => route.template);
  }

  check(answer: Answer): Finding {
    const method = answer.method.toUpperCase();
    const pathname = answer.path.split('?')[0]!.split('#')[0]!;
    const ref = `${method} ${pathname} ${answer.status}`;
    if (!/^\/api\//i.test(pathname) || /^\/api\/docs(\/|$)/i.test(pathname)) {
      return { verdict: 'excluded', key: ref, message: 'not part of the API contract' };
    }
    const templates = this.match(pathname);
    const template = templates.find((t) => this.doc.paths[t]?.[method.toLowerCase()] !== undefined);
    if (template === undefined) {
      // A CORS preflight the API's CORS middleware answered (CORS_ORIGINS): part of the browser's
      // protocol, not an operation of the API (Nest has no OPTIONS route there and would answer 404).
      if (method === 'OPTIONS' && answer.status === 204) {
        return { verdict: 'excluded', key: `${method} (CORS preflight) 204`, message: 'a CORS preflight' };
      }
      // A request no route takes (unknown path, an empty or malformed segment, a body refused before
      // routing) is refused with the error body: nothing else to check. Anything else answered there
      // is an operation the document lacks.
      if (answer.status >= 400 && answer.status < 500) {
        return this.checkBody(
          { verdict: 'excluded', key: `${method} (no route) ${answer.status}`, message: '' },
          answer,
          ERROR_BODY,
        );
      }
      return { verdict: 'violation', key: ref, message: `the document has no operation ${method} ${pathname}` };
    }
    const operation = this.doc.paths[template]![method.toLowerCase()]!;
    const key = `${method} ${template} ${answer.status}`;
    const responses = operation.responses ?? {};
    const statusKey = [String(answer.status), `${Math.floor(answer.status / 100)}XX`, 'default'].find(
      (candidate) => responses[candidate] !== undefined,
    );
    const declared = statusKey === undefined ? undefined : responses[statusKey];
    if (declared === undefined) {
      const listed = Object.keys(responses).join(', ') || 'none';
      return {
        verdict: 'undeclared',
        key,
        message: `status ${answer.status} is not in the document (it lists ${listed})`,
      };
    }
    const mediaType = mediaTypeOf(answer.contentType);
    const content = declared.content ?? {};
    const mediaTypes = Object.keys(content);
    const empty = answer.text === '' || (answer.text === undefined && mediaType === undefined);
    if (mediaTypes.length === 0) {
      // Redirects and empty answers have nothing more to check; a body the document does not describe does.
      if ((answer.status >= 300 && answer.status < 400) || empty) {
        return { verdict: 'ok', key, message: '' };
      }
      return { verdict: 'undeclared', key, message: `no content declared for status ${answer.status}` };
    }
    const entry = mediaTypes.find(
      (declaredType) =>
        declaredType === mediaType ||
        declaredType === '*/*' ||
        (declaredType.endsWith('/*') && mediaType?.startsWith(declaredType.slice(0, -1))),
    );
    if (entry === undefined) {
      return {
        verdict: 'violation',
        key,
        message: `content type ${answer.contentType ?? '(none)'} is not among the declared ${mediaTypes.join(', ')}`,
      };
    }
    const schema = content[entry]!.schema;
    // Non-JSON answers (event streams, pages) are checked for status and content type only.
    if (!isJson(mediaType) || answer.text === undefined) {
      return { verdict: 'ok', key, message: '' };
    }
    if (schema === undefined) {
      return { verdict: 'undeclared', key, message: `no schema declared for ${entry} at status ${answer.status}` };
    }
    const pointer = this.pointer(template, method, statusKey!, entry);
    return this.checkBody({ verdict: 'ok', key, message: '' }, answer, schema, pointer);
  }

  private checkBody(ok: Finding, answer: Answer, schema: SchemaObject, cacheKey?: string): Finding {
    let body: unknown;
    try {
      body = JSON.parse(answer.text ?? '');
    } catch {
      return {
        verdict: 'violation',
        key: ok.key,
        message: `the body is not JSON: ${(answer.text ?? '').slice(0, 200)}`,
      };
    }
    const validate = this.validator(cacheKey ?? JSON.stringify(schema), schema);
    if (validate(body)) {
      return ok;
    }
    return {
      verdict: 'violation',
      key: ok.key,
      message: `the body breaks the schema: ${describe(validate.errors ?? [])}`,
    };
  }

  private validator(id: string, schema: SchemaObject): ValidateFunction {
    let validate = this.validators.get(id);
    if (validate === undefined) {
      try {
        validate = this.ajv.compile(this.convert(schema, false));
      } catch (err) {
        throw new Error(`the schema at ${id} does not compile: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      this.validators.set(id, validate);
    }
    return validate;
  }

  private pointer(template: string, method: string, status: string, mediaType: string): string {
    const escaped = [template, method.toLowerCase(), 'responses', status, 'content', mediaType].map(jsonPointerEscape);
    return `${DOC_ID}#/paths/${escaped.join('/')}`;
  }

  /** OpenAPI 3.0 schema → JSON Schema 2019-09; `open` leaves the top level without a closing keyword. */
  private convert(raw: Json | undefined, open: boolean): SchemaObject {
    if (!isObject(raw)) {
      return {};
    }
    const { nullable, ...schema } = raw;
    if (nullable === true) {
      const inner = this.convert(schema, open);
      if (typeof inner.type === 'string' && inner.$ref === undefined) {
        const widened: SchemaObject = { ...inner, type: [inner.type, 'null'] };
        if (Array.isArray(inner.enum)) {
          widened.enum = [...inner.enum, null];
        }
        return widened;
      }
      return { anyOf: [inner, { type: 'null' }] };
    }
    const out: SchemaObject = { ...schema };
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.startsWith(COMPONENT_PREFIX) ? schema.$ref.slice(COMPONENT_PREFIX.length) : undefined;
      if (name !== undefined) {
        out.$ref = open ? `${DOC_ID}#/$defs/open/${name}` : `${DOC_ID}#/components/schemas/${name}`;
      }
    }
    // OpenAPI 3.0's boolean exclusive bounds are JSON Schema's numbers.
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (typeof schema[flag] === 'boolean') {
        if (schema[flag] === true && typeof schema[bound] === 'number') {
          out[flag] = schema[bound];
          delete out[bound];
        } else {
          delete out[flag];
        }
      }
    }
    if (isObject(schema.properties)) {
      out.properties = Object.fromEntries(
        Object.entries(schema.properties).map(([name, child]) => [name, this.convert(child, false)]),
      );
    }
    if (schema.items !== undefined) {
      out.items = this.convert(schema.items, false);
    }
    if (isObject(schema.additionalProperties)) {
      out.additionalProperties = this.convert(schema.additionalProperties, false);
    }
    const parts = (['allOf', 'oneOf', 'anyOf'] as const).filter((k) => Array.isArray(schema[k]));
    for (const composition of parts) {
      out[composition] = (schema[composition] as Json[]).map((part) => this.convert(part, true));
    }
    if (!open && schema.additionalProperties === undefined) {
      if (parts.length > 0) {
        const members = parts.flatMap((k) => schema[k] as Json[]);
        if (!members.some((member) => this.isFree(member))) {
          out.unevaluatedProperties = false;
        }
      } else if (isObject(schema.properties) && schema.$ref === undefined) {
        out.additionalProperties = false;
      }
    }
    return out;
  }

  /** A schema that allows any properties: no list of them, no composition that would list them. */
  private isFree(raw: Json, seen = new Set<string>()): boolean {
    if (!isObject(raw)) {
      return raw === true;
    }
    if (typeof raw.$ref === 'string') {
      const name = raw.$ref.slice(COMPONENT_PREFIX.length);
      if (seen.has(name)) {
        return false;
      }
      seen.add(name);
      return this.isFree(this.doc.components?.schemas?.[name] ?? {}, seen);
    }
    if (raw.additionalProperties !== undefined && raw.additionalProperties !== false) {
      return true;
    }
    const parts = (['allOf', 'oneOf', 'anyOf'] as const).flatMap((k) => (Array.isArray(raw[k]) ? raw[k] : []));
    if (parts.length > 0) {
      return parts.some((part) => this.isFree(part, seen));
    }
    const objectish = raw.type === undefined || raw.type === 'object';
    return objectish && raw.properties === undefined && raw.enum === undefined;
  }
}

function describe(errors: ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map((error) => {
      const at = error.instancePath === '' ? 'the body' : error.instancePath;
      const extra =
        error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties'
          ? ` (${String((error.params as Record<string, unknown>).additionalProperty ?? (error.params as Record<string, unknown>).unevaluatedProperty)})`
          : '';
      return `${at} ${error.message ?? error.keyword}${extra}`;
    })
    .join('; ');
}
