import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';
import { runWithLogFields } from '../common/log-context.js';
import type { LogFields } from '../common/log-format.js';
import { SAFE_ID } from '../common/correlation.js';
import { UUID } from '../common/ids.js';

/**
 * The ids of a run found in an activity's input: `runId`, `userId`, `agentId`, `requestId` at its top
 * level, or in the run request turn 1 carries (`start`). Inputs are not trusted (a forged task may say
 * anything), so only well-formed ids are taken: they are log fields, never permissions.
 */
export function logFieldsOfActivityInput(input: unknown): LogFields {
  const fields: LogFields = {};
  const sources = [input, (input as { start?: unknown } | null)?.start];
  for (const source of sources) {
    if (typeof source !== 'object' || source === null) {
      continue;
    }
    const record = source as Record<string, unknown>;
    for (const key of ['runId', 'userId', 'agentId'] as const) {
      const value = record[key];
      if (fields[key] === undefined && typeof value === 'string' && UUID.test(value)) {
        fields[key] = value;
      }
    }
    const requestId = record.requestId;
    if (fields.requestId === undefined && typeof requestId === 'string' && SAFE_ID.test(requestId)) {
      fields.requestId = requestId;
    }
  }
  return fields;
}

/**
 * Gives every log line of an activity the ids of its run: the SDK's own lines and the activity's
 * `Context.log` through `getLogAttributes`, and the lines of the Nest services the activity calls
 * through the log context. (The SDK's "Activity started" line comes before the input is read: it has
 * the workflow's ids only.)
 */
export function activityLogFieldsInterceptor(_ctx: Context): ActivityInterceptors {
  let fields: LogFields = {};
  return {
    inbound: {
      execute: (input, next) => {
        fields = logFieldsOfActivityInput(input.args[0]);
        return runWithLogFields(fields, () => next(input));
      },
    },
    outbound: {
      getLogAttributes: (attributes, next) => next({ ...attributes, ...fields }),
    },
  };
}
