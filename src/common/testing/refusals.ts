import { AppError } from '../app-error.js';

/** What `promise` settled to: its rejection, or an Error saying it resolved. */
async function settled(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
}

/** The AppError `promise` was refused with; throws when it resolved or failed with anything else. */
export async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await settled(promise);
  if (!(err instanceof AppError)) {
    throw new Error(`expected an AppError, got ${String(err)}`);
  }
  return err;
}

/** The code `promise` was refused with, or a text saying it was not refused with an AppError (so a spec shows it). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  const err = await settled(promise);
  return err instanceof AppError ? err.code : `not an AppError: ${String(err)}`;
}
