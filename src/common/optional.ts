import { ValidateIf } from 'class-validator';

/**
 * The field may be left out. Unlike class-validator's `@IsOptional()`, `null` is not "left out": it
 * must pass the field's checks like any other value, so a `null` never reaches a NOT NULL column
 * (`{"role": null}` answered 500). Use this on every optional request field.
 */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/**
 * The field may be left out or be `null`, which means "clear it". Only for fields whose column is
 * nullable and whose API gives `null` that meaning (say so in the field's OpenAPI `nullable`).
 */
export function Nullable(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null);
}
