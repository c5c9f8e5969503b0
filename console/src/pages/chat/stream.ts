/**
 * A chat turn as it streams: POST /api/sessions/{token}/messages with Accept: text/event-stream through
 * the typed client, its body read as server-sent events. The events and their data are the document's
 * `x-sse-events` of that route (context, text, tool_call, tool_result, done, error).
 */
import { api, ApiError, type ErrorBody, type Schemas } from '../../api/client';

export interface TurnHandlers {
  /** Earlier messages were condensed for the model (the session still holds them all). */
  context?(data: Schemas['ChatContextEventDto']): void;
  text(data: Schemas['ChatTextEventDto']): void;
  toolCall(data: Schemas['ChatToolCallEventDto']): void;
  toolResult(data: Schemas['ChatToolResultEventDto']): void;
  done(data: Schemas['ChatDoneEventDto']): void;
}

/** One `event:`/`data:` block of the stream. */
interface SseMessage {
  event: string;
  data: string;
}

/**
 * Splits SSE text into messages as it arrives (blank line ends one; `data:` lines join with a newline;
 * comments and other fields are ignored, as the EventSource standard says). Returns what is left over.
 */
export function parseSse(buffer: string, emit: (message: SseMessage) => void): string {
  const text = buffer.replace(/\r\n?/g, '\n');
  let start = 0;
  let end: number;
  while ((end = text.indexOf('\n\n', start)) >= 0) {
    let event = 'message';
    const data: string[] = [];
    for (const line of text.slice(start, end).split('\n')) {
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') {
        event = value;
      } else if (field === 'data') {
        data.push(value);
      }
    }
    if (data.length > 0) {
      emit({ event, data: data.join('\n') });
    }
    start = end + 2;
  }
  return text.slice(start);
}

/**
 * Sends one message and calls `on` for each event as it arrives. Throws an ApiError for a refused
 * turn (an error answer before the stream, or the stream's `error` event) and for a stream that ends
 * without `done`.
 */
export async function streamTurn(token: string, content: string, on: TurnHandlers, signal?: AbortSignal) {
  const answer = await api
    .POST('/api/sessions/{token}/messages', {
      params: { path: { token } },
      body: { content },
      parseAs: 'stream',
      headers: { accept: 'text/event-stream' },
      signal,
    })
    .catch((err: unknown) => {
      throw signal?.aborted ? err : new ApiError(undefined, undefined);
    });
  if (!answer.response.ok || answer.data === undefined || answer.data === null) {
    throw new ApiError(answer.error as Partial<ErrorBody> | undefined, answer.response);
  }
  const reader = (answer.data as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let finished = false;
  let failed: ApiError | undefined;
  const dispatch = ({ event, data }: SseMessage) => {
    const parsed: unknown = JSON.parse(data);
    switch (event) {
      case 'context':
        on.context?.(parsed as Schemas['ChatContextEventDto']);
        break;
      case 'text':
        on.text(parsed as Schemas['ChatTextEventDto']);
        break;
      case 'tool_call':
        on.toolCall(parsed as Schemas['ChatToolCallEventDto']);
        break;
      case 'tool_result':
        on.toolResult(parsed as Schemas['ChatToolResultEventDto']);
        break;
      case 'done':
        finished = true;
        on.done(parsed as Schemas['ChatDoneEventDto']);
        break;
      case 'error':
        failed = new ApiError(parsed as ErrorBody, answer.response);
        break;
      default:
        // An event this console does not know yet: ignored, as SSE clients do.
        break;
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      break;
    }
    buffer = parseSse(buffer + decoder.decode(value, { stream: true }), dispatch);
  }
  if (failed !== undefined) {
    throw failed;
  }
  if (!finished) {
    throw new ApiError({ error: 'The answer stopped before it was complete', code: 'STREAM_ABORTED' }, undefined);
  }
}
