/**
 * A request body that is not valid UTF-8, thrown by the body parsers' `verify` hook. Express's body
 * parser keeps `type`, which the error filter maps to VALIDATION_ERROR (see bodyParserProblem).
 */
export class InvalidUtf8BodyError extends Error {
  override readonly name = 'InvalidUtf8BodyError';
  readonly type = 'entity.verify.failed';

  constructor() {
    super('Request body is not valid UTF-8');
  }
}
