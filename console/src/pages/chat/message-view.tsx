/** How a chat message reads: who said it, its parts in order (texts, each tool call with its result or error), the usage. */
import { type Schemas } from '../../api/client';
import { mcpResultOf } from '../../components/tool-result/content';
import { ContentBlocks } from '../../components/tool-result/content-blocks';
import { type Part, type ShownToolCall } from './parts';

export type Usage = Schemas['ChatUsageDto'];

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

export function ToolCallView({ call }: { call: ShownToolCall }) {
  const state = call.ok === undefined ? 'running' : call.ok ? 'ok' : 'failed';
  // An MCP server's result is content blocks (text, images, links …): shown as such, not as JSON.
  const mcp = call.ok === true ? mcpResultOf(call.result) : undefined;
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
          {mcp === undefined ? (
            <pre>{json(call.result)}</pre>
          ) : (
            <ContentBlocks result={mcp} tool={call.tool} site={call.site} />
          )}
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

export interface ShownMessage {
  id: string;
  role: 'user' | 'assistant';
  /** A user's message: its text. */
  content: string;
  /**
   * A reply: its texts and tool calls in the order they happened, as saved (the API's `parts`) or as
   * they arrive while it streams (built by parts.ts from the same events): shown the same either way.
   */
  parts?: Part[];
  usage?: Usage;
  /** A reply ended before the model was done (the balance ran out, or the turn's input limit). */
  cut?: boolean;
  /** The model was sent this turn's conversation condensed (the stream's `context`): said quietly. */
  condensed?: boolean;
}

function partsOf(message: ShownMessage): Part[] {
  return message.parts ?? (message.content === '' ? [] : [{ type: 'text', text: message.content }]);
}

/** One message of the log; `streaming` marks the reply still arriving. */
export function MessageView({ message, streaming = false }: { message: ShownMessage; streaming?: boolean }) {
  const who = message.role === 'user' ? 'You' : 'Assistant';
  return (
    <article className={`message ${message.role}`} aria-busy={streaming || undefined}>
      <h3 className="who">{who}</h3>
      {message.condensed === true ? (
        <p className="condensed muted">Earlier messages were condensed to fit the model&apos;s context.</p>
      ) : null}
      {partsOf(message).map((part, i) =>
        part.type === 'text' ? (
          <div key={i} className="content">
            {part.text}
          </div>
        ) : (
          <ul key={part.id} className="tool-calls">
            <ToolCallView call={part} />
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
