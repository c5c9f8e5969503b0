import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientInterceptors } from '@temporalio/client';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { Settings } from '../config/settings.js';
import type { Tracing } from '../tracing/tracing.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/src/temporal → dist/ */
const distRoot = path.resolve(here, '..', '..');

/** The workflow bundle with the tracing interceptors, used by a worker with OTEL_EXPORTER_OTLP_ENDPOINT set. */
export const TRACED_WORKFLOW_BUNDLE_PATH = path.join(distRoot, 'workflow-bundle-traced.js');

/**
 * The workflow interceptor modules of the traced bundle, outermost first: ours that gives an agent's
 * long-lived queue workflow a trace of its own; Temporal's OpenTelemetry interceptors (spans for the
 * workflow, its activities and children, the trace context in their headers); ours that hands each
 * run the trace of the request that queued it.
 */
export const TRACING_WORKFLOW_INTERCEPTOR_MODULES = [
  path.join(distRoot, 'workflows', 'queue-trace.interceptors.js'),
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
  path.join(distRoot, 'workflows', 'run-trace.interceptors.js'),
];

/**
 * The API's (and the worker's) Temporal client interceptors: with tracing on, starting, signalling
 * or updating a workflow makes a span and sends its context in the call's Temporal headers. The
 * payload codec leaves headers alone (the SDK encodes neither them nor decodes them), so the header,
 * a W3C `traceparent` and nothing else, is readable by every worker.
 */
export async function tracingClientInterceptors(
  settings: Pick<Settings, 'otelExporterOtlpEndpoint'>,
): Promise<ClientInterceptors | undefined> {
  if (settings.otelExporterOtlpEndpoint === undefined) {
    return undefined;
  }
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

export interface WorkerTracing {
  interceptors: WorkerInterceptors;
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

/**
 * The worker's share: a span around each activity (a child of the workflow's span that scheduled it,
 * so the activity's HTTP requests join the trace), trace ids on activity log lines, and the sink
 * through which the workflow sandbox hands its spans to this process's processor.
 */
export async function workerTracing(tracing: Tracing): Promise<WorkerTracing> {
  const otel = await import('@temporalio/interceptors-opentelemetry');
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      workflowModules: TRACING_WORKFLOW_INTERCEPTOR_MODULES,
    },
    sinks: { exporter: otel.makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
