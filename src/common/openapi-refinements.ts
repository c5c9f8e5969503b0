import type { OpenAPIObject, ParameterObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';

/**
 * What the document must say that Nest's decorators do not: that the server refuses what a schema
 * would otherwise allow, so a client generated from it never sends what is refused.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** Path parameters that name one of our objects: a UUID (ids are), else the object is not found. */
const ID_PARAMETER = /^(id|[a-z]+Id)$/;

type Schema = SchemaObject | ReferenceObject;

function isRef(schema: Schema): schema is ReferenceObject {
  return '$ref' in schema;
}

/**
 * Every object schema a request body can hold (nested DTOs, array items) is closed with
 * `additionalProperties: false`: the validation pipe (whitelist, forbidNonWhitelisted) answers
 * VALIDATION_ERROR for a property a DTO does not declare. Free-form objects (a tool's input, a
 * webhook's payload, a payload's metadata) have no `properties` and stay open, as the server takes them.
 */
export function closeRequestBodies(document: OpenAPIObject): void {
  const components = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const seen = new Set<SchemaObject>();
  const close = (schema: Schema | undefined): void => {
    if (schema === undefined) {
      return;
    }
    if (isRef(schema)) {
      close(components[schema.$ref.split('/').pop() ?? '']);
      return;
    }
    if (seen.has(schema)) {
      return;
    }
    seen.add(schema);
    for (const part of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
      close(part);
    }
    if (schema.items !== undefined) {
      close(schema.items);
    }
    if (schema.properties !== undefined) {
      schema.additionalProperties ??= false;
      for (const property of Object.values(schema.properties)) {
        close(property);
      }
    }
  };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const body = item[method]?.requestBody;
      if (body !== undefined && !('$ref' in body)) {
        for (const media of Object.values(body.content)) {
          close(media.schema);
        }
      }
    }
  }
}

/**
 * Path parameters that name an object (`id`, `agentId`, …) are UUIDs: any other value names nothing
 * and gets the route's not-found answer (the services test UUID before the database sees it).
 */
export function declareIdParameters(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      for (const parameter of (item[method]?.parameters ?? []) as Array<ParameterObject | ReferenceObject>) {
        if ('$ref' in parameter || parameter.in !== 'path' || !ID_PARAMETER.test(parameter.name)) {
          continue;
        }
        const schema = (parameter.schema ?? {}) as SchemaObject;
        if (schema.format === undefined && schema.pattern === undefined) {
          parameter.schema = { ...schema, type: 'string', format: 'uuid' };
          parameter.description ??= 'A UUID; any other value names nothing (the not-found answer)';
        }
      }
    }
  }
}
