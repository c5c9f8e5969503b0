import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import { AppError, type FieldProblem } from './app-error.js';
import { jsonDepth, nulCharacterPath } from './json-depth.js';

/** Deepest nesting a request body may have. */
export const MAX_BODY_DEPTH = 64;

/** Flattens class-validator's tree into `{field, message}` entries with dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const error of errors) {
    const field =
      parent === ''
        ? error.property
        : /^\d+$/.test(error.property)
          ? `${parent}[${error.property}]`
          : `${parent}.${error.property}`;
    for (const message of Object.values(error.constraints ?? {})) {
      out.push({ field, message });
    }
    if (error.children && error.children.length > 0) {
      out.push(...flattenValidationErrors(error.children, field));
    }
  }
  return out;
}

const classValidation = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
  validateCustomDecorators: false,
  exceptionFactory: (errors) => AppError.validation(flattenValidationErrors(errors)),
});

/**
 * The global pipe: DTO bodies must be JSON objects (not arrays or scalars) without NUL characters and
 * pass class-validator; every failure is a VALIDATION_ERROR naming each invalid field. Optional
 * fields use Optional() (src/common/optional.ts), so `null` is checked like any other value.
 */
@Injectable()
export class AppValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = typeof metadata.metatype === 'function' && !isPrimitiveType(metadata.metatype);
    if (metadata.type === 'body' && isDto) {
      if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw AppError.validation([{ field: 'body', message: 'must be a JSON object' }]);
      }
      if (jsonDepth(value, MAX_BODY_DEPTH + 1) > MAX_BODY_DEPTH) {
        throw AppError.validation([{ field: 'body', message: `is nested deeper than ${MAX_BODY_DEPTH} levels` }]);
      }
    }
    if ((metadata.type === 'body' || metadata.type === 'query') && isDto) {
      const nul = nulCharacterPath(value);
      if (nul !== undefined) {
        throw AppError.validation([{ field: nul, message: 'must not contain a NUL character (U+0000)' }]);
      }
    }
    return classValidation.transform(value, metadata);
  }
}

function isPrimitiveType(metatype: unknown): boolean {
  return [String, Boolean, Number, Array, Object].includes(metatype as never);
}
