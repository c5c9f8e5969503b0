import { createRequire, syncBuiltinESMExports } from 'node:module';
import { hostname } from 'node:os';
import type { Span } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { routeTemplate } from '../common/access-log.js';
import type { NodeRequest } from '../common/http.js';
import { readPackageVersion } from '../common/version.js';
import type { Settings } from '../config/settings.js';

/** Which process is tracing: it names the service the spans come from (`agentsite-api`, `agentsite-worker`). */
export type TracedProcess = 'api' | 'worker';

export interface Tracing {
  /** The processor every span goes through (the worker hands it workflow spans from the sandbox too). */
  readonly spanProcessor: SpanProcessor;
  readonly resource: Resource;
  /** Sends what is still buffered and stops. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The tracing this process started, if any (for the shutdown hook). */
export function activeTracing(): Tracing | undefined {
  return active;
}

/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, sends this process's spans to that collector (OTLP/HTTP,
 * JSON, batched): the API's HTTP requests, every outgoing HTTP request (axios and other `node:http`
 * users: tool calls, manifests, OAuth token requests) and `fetch` request (the model) made inside a
 * trace, and Temporal's spans (src/temporal/temporal-tracing.ts). Unset, nothing is loaded, patched
 * or registered. Call it first thing in an entry point: requests made before it are not traced.
 */
export async function startTracing(
  settings: Pick<Settings, 'otelExporterOtlpEndpoint' | 'otelExporterOtlpHeaders'>,
  role: TracedProcess,
): Promise<Tracing | undefined> {
  const endpoint = settings.otelExporterOtlpEndpoint;
  if (endpoint === undefined) {
    return undefined;
  }
  if (active !== undefined) {
    return active;
  }
  // Loaded only when asked for: an untraced process pays nothing for tracing, not even the imports.
  const [
    { NodeTracerProvider },
    { BatchSpanProcessor },
    { OTLPTraceExporter },
    { Resource },
    instrumentation,
    http,
    undici,
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-undici'),
  ]);
  const { RedactingSpanExporter } = await import('./span-redaction.js');

  const resource = new Resource({
    'service.name': `agentsite-${role}`,
    'service.version': readPackageVersion(),
    'service.instance.id': `${process.pid}@${hostname()}`,
  });
  const spanProcessor = new BatchSpanProcessor(
    new RedactingSpanExporter(
      new OTLPTraceExporter({
        url: `${endpoint.replace(/\/+$/, '')}/v1/traces`,
        headers: settings.otelExporterOtlpHeaders,
      }),
    ),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global provider, AsyncLocalStorage as context manager, W3C trace context as propagator.
  provider.register();
  instrumentation.registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new http.HttpInstrumentation({
        // Probes and scrapes would make a trace every few seconds each, and tell nothing.
        ignoreIncomingRequestHook: (request) => isProbe(request.url),
        // Outgoing requests outside any trace (background work) would each make a trace of one span.
        requireParentforOutgoingSpans: true,
        applyCustomAttributesOnSpan: (span, request) => nameServerSpan(span, request),
      }),
      new undici.UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  // The HTTP instrumentation patches `http` and `https` when they are require()d; this process
  // imported them (as ES modules) before tracing started, so require them once to have them patched,
  // and refresh the ES module bindings of the built-ins.
  const require = createRequire(import.meta.url);
  require('http');
  require('https');
  syncBuiltinESMExports();

  active = {
    spanProcessor,
    resource,
    shutdown: async () => {
      active = undefined;
      await provider.shutdown();
    },
  };
  return active;
}

/** Paths of health checks and metrics scrapes (the API's, and a worker's own if it serves them). */
const PROBE_PATHS = ['/api/health', '/api/metrics', '/health', '/metrics'];

/** Whether an incoming request is a probe or a scrape: not traced. */
export function isProbe(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0]!.toLowerCase();
  return PROBE_PATHS.some((probe) => path === probe || path.startsWith(`${probe}/`));
}

/**
 * A server span is named by method and route template (`POST /api/webhooks/agent/:agentId`), as the
 * router matched it (the access log's reading), rather than by method alone; the path with its ids
 * stays in `url.path`.
 */
function nameServerSpan(span: Span, request: unknown): void {
  const req = request as NodeRequest;
  const template = routeTemplate(req);
  if (template === null || typeof req.method !== 'string') {
    return;
  }
  span.setAttribute('http.route', template);
  span.updateName(`${req.method} ${template}`);
}
