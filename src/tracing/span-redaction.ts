import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace-base';

/**
 * Attributes a span may carry out of the process: what a request or a Temporal step was (method,
 * route, status, hosts, ids), never what it carried. Everything else is dropped, so an attribute a
 * library adds in a later version (a header, a Temporal memo, a workflow's last result) stays in the
 * process until someone lists it here.
 */
const KEPT_ATTRIBUTES = new Set([
  // HTTP (instrumentation-http: the older semantic conventions; undici: the stable ones)
  'http.method',
  'http.request.method',
  'http.request.method_original',
  'http.status_code',
  'http.response.status_code',
  'http.route',
  'http.scheme',
  'url.scheme',
  'url.path',
  'http.flavor',
  'network.protocol.version',
  'net.transport',
  'http.host',
  'net.host.name',
  'net.host.port',
  'net.peer.name',
  'net.peer.port',
  'server.address',
  'server.port',
  'error.type',
  'http.request.resend_count',
  // The Anthropic SDK's span of a model call: which model, not what was said (nor the token counts)
  'gen_ai.operation.name',
  'gen_ai.provider.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
  // Temporal's interceptors: ids and names of workflows, runs, activities and updates
  'temporalWorkflowId',
  'run_id',
  'temporalActivityId',
  'temporalUpdateId',
  // ...and, on workflow spans, these fields of the workflow's info
  'workflowId',
  'runId',
  'workflowType',
  'taskQueue',
  'namespace',
  'attempt',
]);

/** Attributes holding a URL or a request target: kept without query string, fragment or user info. */
const URL_ATTRIBUTES = new Set(['http.url', 'url.full', 'http.target']);

/** The one event attribute kept: an exception's class, not its message or stack (they may quote run data). */
const KEPT_EVENT_ATTRIBUTES = new Set(['exception.type']);

/**
 * A URL or path without what may carry secrets: `?code=…&state=…` of an OAuth callback, a token in
 * a query, `user:password@`. What remains is scheme, host, port and path.
 */
export function redactUrl(value: string): string {
  const cut = value.search(/[?#]/);
  const withoutQuery = cut < 0 ? value : value.slice(0, cut);
  return withoutQuery.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

export function redactAttributes(attributes: Attributes, kept: Set<string> = KEPT_ATTRIBUTES): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (URL_ATTRIBUTES.has(key) && typeof value === 'string') {
      out[key] = redactUrl(value);
    } else if (kept.has(key) && isPrimitive(value)) {
      out[key] = value;
    }
  }
  return out;
}

/** Temporal's workflow exporter copies fields of the workflow's info onto spans as they are: objects included. */
function isPrimitive(value: AttributeValue | undefined): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function redactEvent(event: TimedEvent): TimedEvent {
  return {
    name: event.name,
    time: event.time,
    ...(event.attributes === undefined
      ? {}
      : { attributes: redactAttributes(event.attributes, KEPT_EVENT_ATTRIBUTES) }),
    ...(event.droppedAttributesCount === undefined ? {} : { droppedAttributesCount: event.droppedAttributesCount }),
  };
}

/** A copy of the span that carries no run data: allowed attributes only, no error messages. */
export function redactSpan(span: ReadableSpan): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    // An error's message may quote a tool's answer or a prompt: the code says that it failed.
    status: { code: span.status.code },
    attributes: redactAttributes(span.attributes),
    links: span.links.map((link) => ({ context: link.context })),
    events: span.events.map(redactEvent),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/**
 * Redacts every span on its way out, whoever made it (HTTP and fetch instrumentations, Temporal's
 * interceptors in the process and in the workflow sandbox): one place decides what leaves.
 */
export class RedactingSpanExporter implements SpanExporter {
  constructor(private readonly next: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter['export']>[1]): void {
    this.next.export(spans.map(redactSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush?.() ?? Promise.resolve();
  }
}
