/**
 * Not a workflow: the first interceptors of the traced workflow bundle, before Temporal's
 * OpenTelemetry ones (see run-trace.interceptors.ts for the last).
 *
 * The agent's queue workflow (`agent-<agentId>`) waits for runs for as long as the agent exists, so
 * its span ends only when it continues as new. Started in the trace of the request that happened to
 * start it, it would leave that trace with a span that stays open and unexported; so it starts a
 * trace of its own. The requests it receives keep theirs: their signals and updates carry it.
 */
import { workflowInfo, type WorkflowInterceptors } from '@temporalio/workflow';
import type * as workflows from './index.js';
import { TRACE_HEADER } from './run-trace.interceptors.js';

/** The queue workflow's type (its export name, checked by the compiler). */
const QUEUE_WORKFLOW: keyof typeof workflows = 'agentQueueWorkflow';

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [
    {
      execute(input, next) {
        if (workflowInfo().workflowType !== QUEUE_WORKFLOW || input.headers[TRACE_HEADER] === undefined) {
          return next(input);
        }
        const headers = { ...input.headers };
        delete headers[TRACE_HEADER];
        return next({ ...input, headers });
      },
    },
  ],
});
