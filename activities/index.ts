import { hostname } from 'node:os';
import { Context } from '@temporalio/activity';
import type { EchoInput, EchoOutput } from '../workflows/contracts.js';

/** The ports the worker fills with the application's services. */
export interface ActivityDeps {
  workerIdentity: string;
}

/** All activities, built over their dependencies (so tests can pass fakes for the ports). */
export function createActivities(deps: ActivityDeps) {
  return {
    async echo(input: EchoInput): Promise<EchoOutput> {
      const info = Context.current().info;
      Context.current().log.info('echo', { workflowId: info.workflowExecution?.workflowId, attempt: info.attempt });
      return { message: input.message, handledBy: deps.workerIdentity || hostname() };
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
