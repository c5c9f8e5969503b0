/**
 * Not a workflow: the last interceptors of the traced workflow bundle (workflow-bundle-traced.js, used
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set), after Temporal's OpenTelemetry ones: the header set here
 * is the one the child workflow gets.
 *
 * An agent's queue workflow lives across many runs in a trace of its own (queue-trace.interceptors.ts),
 * so the span it starts a run's child workflow under is not the run's. A run belongs to the trace of
 * the request that queued it (a webhook's, a manual start's): that trace's header arrives on the
 * enqueue signal or update, and is handed to the run's child workflow when it starts. (A run still
 * queued when the queue continues as new loses the link and joins the queue's trace.)
 */
import type { Payload, WorkflowInterceptors } from '@temporalio/workflow';
import { AGENT_HANDLERS, type RunRequest, workflowIds } from './contracts.js';

/** The header Temporal's OpenTelemetry interceptors carry a span context in (their TRACE_HEADER). */
export const TRACE_HEADER = '_tracer-data';

/** Queued requests whose trace is remembered (more are queued only in a flood; those lose their link). */
const MAX_REMEMBERED_TRACES = 1000;

export const interceptors = (): WorkflowInterceptors => {
  // Per workflow execution (the SDK calls this factory for each): child workflow id → trace header.
  const traces = new Map<string, Payload>();

  const remember = (args: unknown[], header: Payload | undefined): void => {
    const request = args[0] as Partial<RunRequest> | undefined;
    if (header === undefined || typeof request?.runId !== 'string' || traces.size >= MAX_REMEMBERED_TRACES) {
      return;
    }
    const childId = workflowIds.run(request.runId);
    // A repeated delivery re-sends the first request: the run stays in the first delivery's trace.
    if (!traces.has(childId)) {
      traces.set(childId, header);
    }
  };

  return {
    inbound: [
      {
        handleSignal(input, next) {
          if (input.signalName === AGENT_HANDLERS.enqueueRunSignal) {
            remember(input.args, input.headers[TRACE_HEADER]);
          }
          return next(input);
        },
        handleUpdate(input, next) {
          if (input.name === AGENT_HANDLERS.enqueueRun) {
            remember(input.args, input.headers[TRACE_HEADER]);
          }
          return next(input);
        },
      },
    ],
    outbound: [
      {
        startChildWorkflowExecution(input, next) {
          const header = traces.get(input.options.workflowId);
          if (header === undefined) {
            return next(input);
          }
          traces.delete(input.options.workflowId);
          return next({ ...input, headers: { ...input.headers, [TRACE_HEADER]: header } });
        },
      },
    ],
  };
};
