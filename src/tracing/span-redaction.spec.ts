import http from 'node:http';
import https from 'node:https';
import { describe, expect, it } from '@jest/globals';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { tracingClientInterceptors } from '../temporal/temporal-tracing.js';
import { RedactingSpanExporter, redactSpan, redactUrl } from './span-redaction.js';
import { activeTracing, isProbe, startTracing } from './tracing.js';

function span(overrides: Partial<ReadableSpan>): ReadableSpan {
  return {
    name: 'GET',
    kind: SpanKind.SERVER,
    spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 }),
    parentSpanId: '3'.repeat(16),
    startTime: [1, 0],
    endTime: [2, 0],
    status: { code: SpanStatusCode.UNSET },
    attributes: {},
    links: [],
    events: [],
    duration: [1, 0],
    ended: true,
    resource: Resource.empty(),
    instrumentationLibrary: { name: 'test' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...overrides,
  };
}

describe('span redaction', () => {
  it('keeps scheme, host and path of a URL, never its query, fragment or user info', () => {
    expect(redactUrl('https://site.example/oauth/callback?code=abc&state=xyz')).toBe(
      'https://site.example/oauth/callback',
    );
    expect(redactUrl('https://user:secret@site.example:8443/a#token=1')).toBe('https://site.example:8443/a');
    expect(redactUrl('/api/oauth/callback?code=abc')).toBe('/api/oauth/callback');
    expect(redactUrl('/api/runs/1')).toBe('/api/runs/1');
  });

  it('lets out the attributes that say what a request or a step was, and nothing it carried', () => {
    const redacted = redactSpan(
      span({
        attributes: {
          'http.method': 'GET',
          'http.url': 'http://localhost:3000/api/oauth/callback?code=abc&state=xyz',
          'http.target': '/api/oauth/callback?code=abc&state=xyz',
          'url.full': 'https://model.example/v1/messages?key=k',
          'url.query': '?key=k',
          'http.status_code': 200,
          'http.route': '/api/oauth/callback',
          'http.user_agent': 'curl/8',
          'net.peer.ip': '203.0.113.9',
          'http.response.header.content-length': 2,
          temporalWorkflowId: 'agent-1',
          run_id: 'r1',
          temporalTerminateReason: 'a reason someone typed',
          workflowType: 'agentQueueWorkflow',
          // The Anthropic SDK's call span: content only when asked for by its own variables, tokens always.
          'gen_ai.request.model': 'claude-sonnet-4-5',
          'gen_ai.input.messages': '[{"role":"user","content":"secret"}]',
          'gen_ai.system_instructions': 'secret prompt',
          'gen_ai.usage.input_tokens': 1500,
          'gen_ai.usage.output_tokens': 600,
          // Temporal's workflow exporter copies the workflow's info onto spans: objects included.
          memo: { agentName: 'x' } as never,
          lastResult: 'a result' as never,
        },
      }),
    );
    expect(redacted.attributes).toEqual({
      'http.method': 'GET',
      'http.url': 'http://localhost:3000/api/oauth/callback',
      'http.target': '/api/oauth/callback',
      'url.full': 'https://model.example/v1/messages',
      'http.status_code': 200,
      'http.route': '/api/oauth/callback',
      temporalWorkflowId: 'agent-1',
      run_id: 'r1',
      workflowType: 'agentQueueWorkflow',
      'gen_ai.request.model': 'claude-sonnet-4-5',
    });
  });

  it('says that a step failed and with which class of error, not the message or stack (they may quote run data)', () => {
    const redacted = redactSpan(
      span({
        status: { code: SpanStatusCode.ERROR, message: 'tool answered: secret note' },
        events: [
          {
            name: 'exception',
            time: [1, 5],
            attributes: {
              'exception.type': 'ApplicationFailure',
              'exception.message': 'tool answered: secret note',
              'exception.stacktrace': 'at secret note',
            },
          },
        ],
        links: [
          { context: { traceId: '4'.repeat(32), spanId: '5'.repeat(16), traceFlags: 1 }, attributes: { a: 'b' } },
        ],
      }),
    );
    expect(redacted.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(redacted.events).toEqual([
      { name: 'exception', time: [1, 5], attributes: { 'exception.type': 'ApplicationFailure' } },
    ]);
    expect(redacted.links).toEqual([{ context: { traceId: '4'.repeat(32), spanId: '5'.repeat(16), traceFlags: 1 } }]);
    expect(JSON.stringify({ ...redacted, resource: undefined })).not.toContain('secret');
    expect(redacted.spanContext().spanId).toBe('2'.repeat(16));
    expect(redacted.parentSpanId).toBe('3'.repeat(16));
  });

  it('hands the exporter behind it redacted copies', () => {
    const exported: ReadableSpan[][] = [];
    const next: SpanExporter = {
      export: (spans, done) => {
        exported.push(spans);
        done({ code: 0 });
      },
      shutdown: () => Promise.resolve(),
    };
    let result: unknown;
    new RedactingSpanExporter(next).export([span({ attributes: { 'http.target': '/a?b=c', x: 'y' } })], (r) => {
      result = r;
    });
    expect(result).toEqual({ code: 0 });
    expect(exported[0]![0]!.attributes).toEqual({ 'http.target': '/a' });
  });
});

describe('probes', () => {
  it('health checks and metrics scrapes make no traces; everything else does', () => {
    for (const probe of [
      '/api/health',
      '/api/health/live',
      '/api/health/ready?x=1',
      '/api/metrics',
      '/health',
      '/metrics',
    ]) {
      expect(isProbe(probe)).toBe(true);
    }
    for (const route of ['/api/healthy', '/api/runs/1', '/api/webhooks/agent/1', '/', undefined]) {
      expect(isProbe(route)).toBe(false);
    }
  });
});

describe('tracing without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('starts nothing: no provider, no patched http, no Temporal interceptors', async () => {
    expect(
      await startTracing({ otelExporterOtlpEndpoint: undefined, otelExporterOtlpHeaders: {} }, 'api'),
    ).toBeUndefined();
    expect(activeTracing()).toBeUndefined();
    expect(await tracingClientInterceptors({ otelExporterOtlpEndpoint: undefined })).toBeUndefined();
    // The global provider is still the API's no-op proxy, with nothing behind it.
    expect((trace.getTracerProvider() as { getDelegate?: () => unknown }).getDelegate?.()?.constructor.name).toBe(
      'NoopTracerProvider',
    );
    for (const fn of [http.request, https.request, http.Server.prototype.emit]) {
      expect((fn as { __wrapped?: boolean }).__wrapped).toBeUndefined();
    }
  });
});
