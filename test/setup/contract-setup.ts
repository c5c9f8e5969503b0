import { afterAll, afterEach, expect } from '@jest/globals';
import path from 'node:path';
import type { Finding } from '../utils/contract.js';
import { appendSummary, ContractRecorder, failureMessage, SERVICE_HEADER } from './contract-recorder.js';

/**
 * Jest setupFilesAfterEnv: every answer of the service a test file receives through fetch (Http,
 * and the suites' own fetch calls for streams and redirects) or rawRequest is checked against the
 * service's OpenAPI document. A test fails (afterEach) when an answer it received breaks the
 * document; in CONTRACT_CHECK=strict (the default) also when the document declares nothing for it.
 * Answers of beforeAll hooks are reported with the first test; those of afterAll hooks by afterAll.
 */

const unwrapped = globalThis.fetch;
const recorder = new ContractRecorder(unwrapped);
(globalThis as { __agentsiteContract?: ContractRecorder }).__agentsiteContract = recorder;

function requestOf(input: Parameters<typeof fetch>[0], init?: RequestInit): { url: string; method: string } {
  if (typeof input === 'string' || input instanceof URL) {
    return { url: String(input), method: init?.method ?? 'GET' };
  }
  return { url: input.url, method: init?.method ?? input.method };
}

globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
  const res = await unwrapped(input, init);
  if (!res.headers.has(SERVICE_HEADER)) {
    return res;
  }
  const request = requestOf(input, init);
  const url = new URL(res.url || request.url);
  const contentType = res.headers.get('content-type') ?? undefined;
  // A stream is checked for status and content type only: reading a copy of it would wait for its end.
  const streamed = contentType?.toLowerCase().startsWith('text/event-stream') === true;
  const method = res.redirected ? 'GET' : request.method;
  const text = streamed ? undefined : method.toUpperCase() === 'HEAD' ? '' : await res.clone().text();
  recorder.observe(url.origin, { method, path: `${url.pathname}${url.search}`, status: res.status, contentType, text });
  return res;
};

let seen: Finding[] = [];

async function report(): Promise<void> {
  const findings = await recorder.flush();
  seen.push(...findings);
  const message = failureMessage(findings, recorder.mode);
  if (message !== undefined) {
    throw new Error(message);
  }
}

afterEach(report);

afterAll(async () => {
  try {
    await report();
  } finally {
    const file = path.relative(process.cwd(), expect.getState().testPath ?? 'unknown');
    appendSummary(file, seen);
    seen = [];
  }
});
