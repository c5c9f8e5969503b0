/** The benchmarks' HTTP client side: keep-alive requests, and the time to a streamed answer's first text. */
import http from 'node:http';
import type { FakeModel, RecordedRequest } from '../test/fixtures/fake-model.js';

export const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: keepAlive, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

/**
 * A kept-alive socket the server closed as idle just as it was reused fails at once: such a request
 * never reached the server, and is sent again (as Node's http documentation recommends).
 */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  agent: http.Agent = keepAlive,
): Promise<{ status: number; text: string }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await postOnce(url, body, headers, agent);
    } catch (err) {
      if (attempt >= 3 || !(err as { reusedSocket?: boolean }).reusedSocket) {
        throw err;
      }
    }
  }
}

function postOnce(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  agent: http.Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(Object.assign(err, { reusedSocket: req.reusedSocket && err.code === 'ECONNRESET' })),
    );
    req.end(data);
  });
}

/**
 * POSTs with `accept: text/event-stream` and resolves with the time (ms) to the first text event
 * (the chat's `text`, the model's `content_block_delta`), reported once the answer has ended: the next
 * request must not overlap the end of this turn (the chat saves it after the stream).
 */
export function firstText(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  agent: http.Agent = keepAlive,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const data = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      },
      (res) => {
        let first: number | undefined;
        res.on('data', (chunk: Buffer) => {
          if (first === undefined && /event: (text|content_block_delta)/.test(chunk.toString())) {
            first = performance.now() - started;
          }
        });
        res.on('end', () =>
          first !== undefined ? resolve(first) : reject(new Error(`no text event from ${url} (${res.statusCode})`)),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/**
 * The requests the service sent the fake model from index `from` of its record on, by the content of
 * their last message (the turn's own, unique in a benchmark): the baselines of benchmarks 4 and 9
 * send the model these same requests.
 */
export function serviceRequests(model: FakeModel, from: number): Map<string, RecordedRequest['body']> {
  const byTurn = new Map<string, RecordedRequest['body']>();
  for (const { body } of model.requests.slice(from)) {
    const last = body.messages.at(-1)?.content;
    if (typeof last === 'string') {
      byTurn.set(last, body);
    }
  }
  return byTurn;
}

/** The parts of a recorded request the floor app sends again through the Anthropic SDK. */
function floorRequest(body: RecordedRequest['body']): Record<string, unknown> {
  const { model, system, messages, tools } = body;
  return { model, max_tokens: body.max_tokens ?? 1024, system, messages, tools };
}

/** Hands the floor app (adapters.ts) a request to send the model on its next `chat` naming `key`. */
export async function prepareFloor(floorUrl: string, key: string, body: RecordedRequest['body']): Promise<void> {
  const res = await post(
    `${floorUrl}/api/chat/prepare`,
    { key, request: floorRequest(body) },
    { authorization: 'Bearer x' },
  );
  if (res.status !== 204) {
    throw new Error(`the floor app refused a prepared request: ${res.status} ${res.text}`);
  }
}
