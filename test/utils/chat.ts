/** A chat turn's SSE answer, read event by event as a browser's EventSource would. */

export interface SseEvent {
  event: string;
  data: any;
  receivedAt: number;
}

/** Reads an SSE answer event by event; `onEvent` may return 'stop' to disconnect like a closed tab. */
export async function streamTurn(
  baseUrl: string,
  token: string,
  sessionToken: string,
  content: string,
  onEvent?: (e: SseEvent) => 'stop' | void,
): Promise<{ status: number; events: SseEvent[] }> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/sessions/${sessionToken}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ content }),
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  if (!res.body) {
    return { status: res.status, events };
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let split: number;
      while ((split = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, split);
        buffer = buffer.slice(split + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1] ?? 'message';
        const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null');
        const parsed = { event, data, receivedAt: Date.now() };
        events.push(parsed);
        if (onEvent?.(parsed) === 'stop') {
          controller.abort();
          return { status: res.status, events };
        }
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) {
      throw err;
    }
  }
  return { status: res.status, events };
}

/** A part of a reply as a client builds it from the stream: text as it arrived, each tool call with its result. */
export type StreamedPart =
  | { type: 'text'; text: string }
  | {
      type: 'tool_call';
      id: string;
      site: string;
      tool: string;
      input: unknown;
      ok?: boolean;
      result?: unknown;
      error?: string;
    };

/**
 * The parts a turn's events show, in order: text deltas join the text part they follow, a tool call
 * starts a part of its own and its result completes it (what a client watching the stream sees).
 */
export function partsOfStream(events: SseEvent[]): StreamedPart[] {
  const parts: StreamedPart[] = [];
  for (const { event, data } of events) {
    const last = parts[parts.length - 1];
    if (event === 'text' && last?.type === 'text') {
      last.text += data.delta;
    } else if (event === 'text') {
      parts.push({ type: 'text', text: data.delta });
    } else if (event === 'tool_call') {
      parts.push({ type: 'tool_call', ...data });
    } else if (event === 'tool_result') {
      const call = parts.find((p) => p.type === 'tool_call' && p.id === data.id);
      Object.assign(call ?? {}, data);
    }
  }
  return parts;
}

/** A part in short: `text: …` or `tool_call: <tool> ok|failed`. */
export function partSummary(part: { type: string; text?: string; tool?: string; ok?: boolean }): string {
  return part.type === 'text' ? `text: ${part.text}` : `tool_call: ${part.tool} ${part.ok ? 'ok' : 'failed'}`;
}
