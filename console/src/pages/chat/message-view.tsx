/** How a chat message reads: who said it, the text, each tool call with its result or error, the usage. */
import { type Schemas } from '../../api/client';

export type ToolCall = Schemas['ToolCallRecordDto'];
export type Usage = Schemas['ChatUsageDto'];

/** A tool call as the conversation shows it; `ok` is undefined while its result is on its way. */
export interface ShownToolCall {
  id: string;
  site: string;
  tool: string;
  input: unknown;
  ok?: boolean;
  result?: unknown;
  error?: string;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

export function ToolCallView({ call }: { call: ShownToolCall }) {
  const state = call.ok === undefined ? 'running' : call.ok ? 'ok' : 'failed';
  return (
    <li className={`tool-call ${state}`} aria-label={`Tool call ${call.tool} on ${call.site}: ${state}`}>
      <p>
        <span className="visually-hidden">Tool call </span>
        <strong>{call.tool}</strong> <span className="muted">on {call.site}</span>{' '}
        <span className={state === 'ok' ? 'badge ok' : state === 'failed' ? 'badge bad' : 'badge warn'}>
          {state === 'running' ? 'calling…' : state}
        </span>
      </p>
      <details>
        <summary>Input</summary>
        <pre>{json(call.input)}</pre>
      </details>
      {call.ok === true ? (
        <details>
          <summary>Result</summary>
          <pre>{json(call.result)}</pre>
        </details>
      ) : null}
      {call.ok === false ? <p className="field-error">Error: {call.error}</p> : null}
    </li>
  );
}

export function UsageView({ usage }: { usage: Usage }) {
  return (
    <p className="usage muted">
      Usage: {usage.inputTokens} input tokens, {usage.outputTokens} output tokens, {usage.credits} credits
    </p>
  );
}

/** A reply in the order it happened: text, then a tool call, then more text... */
export type Part = { kind: 'text'; text: string } | { kind: 'tool'; call: ShownToolCall };

export interface ShownMessage {
  id: string;
  role: 'user' | 'assistant';
  /** A saved message: its text, and its tool calls (shown first: they came before the answer). */
  content: string;
  toolCalls?: ShownToolCall[];
  /** A reply streamed in this page: its parts in order (content and toolCalls are then unused). */
  parts?: Part[];
  usage?: Usage;
  /** A reply ended before the model was done (the balance ran out, or the turn's input limit). */
  cut?: boolean;
}

function partsOf(message: ShownMessage): Part[] {
  if (message.parts !== undefined) {
    return message.parts;
  }
  const calls: Part[] = (message.toolCalls ?? []).map((call) => ({ kind: 'tool', call }));
  return message.content === '' ? calls : [...calls, { kind: 'text', text: message.content }];
}

/** One message of the log; `streaming` marks the reply still arriving. */
export function MessageView({ message, streaming = false }: { message: ShownMessage; streaming?: boolean }) {
  const who = message.role === 'user' ? 'You' : 'Assistant';
  return (
    <article className={`message ${message.role}`} aria-busy={streaming || undefined}>
      <h3 className="who">{who}</h3>
      {partsOf(message).map((part, i) =>
        part.kind === 'text' ? (
          <div key={i} className="content">
            {part.text}
          </div>
        ) : (
          <ul key={part.call.id} className="tool-calls">
            <ToolCallView call={part.call} />
          </ul>
        ),
      )}
      {message.cut === true ? (
        <p className="cut muted">Cut short: the turn ended before the assistant was done (credits or input limit).</p>
      ) : null}
      {message.usage === undefined ? null : <UsageView usage={message.usage} />}
    </article>
  );
}
