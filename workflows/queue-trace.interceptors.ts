/**
 * Not a workflow: the first interceptors of the traced workflow bundle, before Temporal's
 * OpenTelemetry ones (see run-trace.interceptors.ts for the last).
 *
 * An agent's queue workflow (`agent-<agentId>`) waits for runs for as long as the agent exists, so
 * its span ends only when it continues as new. Started in the trace of the request that happened to
 * start it, it would leave that trace with a span that stays open and unexported; so it starts a
 * trace of its own. The requests it receives keep theirs: their signals and updates carry it.
 */
import { workflowInfo, type WorkflowInterceptors } from '@temporalio/workflow';
import type * as workflows from './index.js';
import { TRACE_HEADER } from './run-trace.interceptors.js';

/** The queue workflows' types (export names, checked by the compiler): today's, and the one of old. */
const QUEUE_WORKFLOWS: ReadonlySet<string> = new Set<keyof typeof workflows>(['agentQueueWorkflow', 'agentWorkflow']);

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [
    {
      execute(input, next) {
        if (!QUEUE_WORKFLOWS.has(workflowInfo().workflowType) || input.headers[TRACE_HEADER] === undefined) {
          return next(input);
        }
        const headers = { ...input.headers };
        delete headers[TRACE_HEADER];
        return next({ ...input, headers });
      },
    },
  ],
});
