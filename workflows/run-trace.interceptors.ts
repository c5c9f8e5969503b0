/**
 * Not a workflow: the last interceptors of the traced workflow bundle (workflow-bundle-traced.js, used
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set), after Temporal's OpenTelemetry ones: the headers set here
 * are the ones Temporal writes.
 *
 * An agent's queue workflow has a trace of its own (queue-trace.interceptors.ts), so the spans it
 * would give a run are not the run's. A run belongs to the trace of the request that queued it (a
 * webhook's, a manual start's): that trace's header arrives on the enqueue signal or update, and is
 * handed to each activity of the run (the queue runs each run itself). A queue hands the headers of
 * the runs still queued to its next execution.
 */
import type { Payload, WorkflowInterceptors } from '@temporalio/workflow';
import { AGENT_HANDLERS, type AgentQueueInput, type RunRequest } from './contracts.js';

/** The header Temporal's OpenTelemetry interceptors carry a span context in (their TRACE_HEADER). */
export const TRACE_HEADER = '_tracer-data';

/** Queued requests whose trace is remembered (more are queued only in a flood; those lose their link). */
const MAX_REMEMBERED_TRACES = 1000;

/** A header as workflow input can carry it (JSON): its bytes as arrays of numbers. */
interface CarriedHeader {
  metadata: Record<string, number[]>;
  data: number[];
}

function carried(header: Payload): CarriedHeader {
  return {
    metadata: Object.fromEntries(Object.entries(header.metadata ?? {}).map(([k, v]) => [k, Array.from(v)])),
    data: Array.from(header.data ?? []),
  };
}

function restored(value: unknown): Payload | undefined {
  const header = value as Partial<CarriedHeader> | null | undefined;
  if (typeof header !== 'object' || header === null || !Array.isArray(header.data)) {
    return undefined;
  }
  return {
    metadata: Object.fromEntries(
      Object.entries(header.metadata ?? {}).map(([k, v]) => [k, Uint8Array.from(Array.isArray(v) ? v : [])]),
    ),
    data: Uint8Array.from(header.data),
  };
}

function runIdOf(args: unknown[]): string | undefined {
  const first = args[0] as { runId?: unknown } | null | undefined;
  return typeof first?.runId === 'string' ? first.runId : undefined;
}

export const interceptors = (): WorkflowInterceptors => {
  // Per workflow execution (the SDK calls this factory for each): run id → trace header.
  const traces = new Map<string, Payload>();

  const remember = (runId: string | undefined, header: Payload | undefined): void => {
    // A repeated delivery re-sends the first request: the run stays in the first delivery's trace.
    if (header !== undefined && runId !== undefined && traces.size < MAX_REMEMBERED_TRACES && !traces.has(runId)) {
      traces.set(runId, header);
    }
  };

  /** The run's trace in place of the queue's, for what the run asks of Temporal. */
  const withRunTrace = <T extends { headers: Record<string, Payload> }>(input: T, runId: string | undefined): T => {
    const header = runId !== undefined ? traces.get(runId) : undefined;
    return header === undefined ? input : { ...input, headers: { ...input.headers, [TRACE_HEADER]: header } };
  };

  return {
    inbound: [
      {
        execute(input, next) {
          const carriedTraces = (input.args[0] as AgentQueueInput | undefined)?.traces;
          for (const [runId, header] of Object.entries(carriedTraces ?? {})) {
            remember(runId, restored(header));
          }
          return next(input);
        },
        handleSignal(input, next) {
          if (input.signalName === AGENT_HANDLERS.enqueueRunSignal) {
            remember(runIdOf(input.args), input.headers[TRACE_HEADER]);
          }
          return next(input);
        },
        handleUpdate(input, next) {
          if (input.name === AGENT_HANDLERS.enqueueRun) {
            remember(runIdOf(input.args), input.headers[TRACE_HEADER]);
          }
          return next(input);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity(input, next) {
          return next(withRunTrace(input, runIdOf(input.args)));
        },
        scheduleLocalActivity(input, next) {
          return next(withRunTrace(input, runIdOf(input.args)));
        },
        continueAsNew(input, next) {
          const args = input.args as [AgentQueueInput | undefined, ...unknown[]];
          const queue = args[0]?.queue;
          if (queue === undefined) {
            return next(input);
          }
          // The runs still queued keep their trace in the next execution.
          const kept: Record<string, CarriedHeader> = {};
          for (const request of queue as RunRequest[]) {
            const header = traces.get(request.runId);
            if (header !== undefined) {
              kept[request.runId] = carried(header);
            }
          }
          return next({ ...input, args: [{ ...args[0], traces: kept }, ...args.slice(1)] });
        },
      },
    ],
  };
};
