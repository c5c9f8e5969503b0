import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { type BilledAnswer, BilledModel } from '../model/billed-model.js';
import type { ModelRequest, ModelStreamEvent } from '../model/model-client.js';
import type { HoldDecision } from '../credits/credits.service.js';
import { buildRunTools, keptResult } from '../runs/run-tools.js';
import { ToolCaller } from '../tools/tool-caller.js';
import {
  modelContentOf,
  modelToolsOf,
  type ModelContentBlock,
  type ModelMessage,
  type ModelTool,
  type RunTool,
  type ToolResultBlock,
} from '../../workflows/contracts.js';
import { briefOf, condenseConversation, estimateTokens, jsonBytes, messageBudgetBytes } from './chat-context.js';
import { contentOf } from './chat-parts.js';
import {
  type ContextNotice,
  type MessageResponse,
  toMessageResponse,
  type TurnContext,
  type TurnSink,
} from './chat-responses.js';
import type { StoredPart, ToolCallRecord } from './chat.entities.js';
import { ChatRepository, type TurnSlot } from './chat.repository.js';
import type { SavedMessages } from './turn-context-cache.js';

/** Model turns one chat message may take (tool use loops) before the reply is cut. */
export const MAX_CHAT_MODEL_TURNS = 10;

const SYSTEM_PROMPT =
  'You are the assistant of agentsite. Use the tools of the sites the user connected when they help.';

/** A turn's reply made ready (ChatReplyService.prepare). */
export interface PreparedReply {
  session: TurnContext['session'];
  content: string;
  tools: RunTool[];
  /** The conversation with the new message, whole (each call sends it condensed). */
  messages: ModelMessage[];
  replyId: string;
  first: {
    sent: CondensedRequest;
    /** The credits the first call is held for (BilledModel.estimate), under `reference`. */
    estimate: number;
    reference: string;
  };
}

/** The conversation as a call sends it: condensed to the budget, its JSON size, and what was condensed. */
interface CondensedRequest {
  messages: ModelMessage[];
  bytes: number;
  notice?: ContextNotice;
}

/** A chat reply: the model and tool loop of one message, and saving it once it is complete. */
@Injectable()
export class ChatReplyService {
  constructor(
    private readonly chats: ChatRepository,
    private readonly model: BilledModel,
    private readonly tools: ToolCaller,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * A turn's reply made ready, without a side effect: the session's tools, the conversation so far
   * with the new message, and the first model call (what it sends, and what it is held for under
   * which reference), so that its hold can be sent before the turn starts (ChatTurnService).
   */
  prepare({ session, sites, history }: TurnContext, content: string, replyId: string = randomUUID()): PreparedReply {
    const tools = buildRunTools(sites, (site, tool) => {
      const chosen = session.sites.find((s) => s.siteId === site.id)?.tools ?? null;
      return chosen === null || chosen.includes(tool);
    });
    const messages: ModelMessage[] = [];
    for (const row of history) {
      if (row.role === 'user') {
        appendUserText(messages, row.content);
      } else {
        messages.push(...(row.modelMessages ?? [{ role: 'assistant', content: row.content }]));
      }
    }
    appendUserText(messages, content);
    const sent = this.condensed(messages, modelToolsOf(tools));
    return {
      session,
      content,
      tools,
      messages,
      replyId,
      first: {
        sent,
        estimate: BilledModel.estimate(this.request(tools, sent.messages)),
        reference: `chat:${replyId}:1`,
      },
    };
  }

  /**
   * One chat turn: the conversation so far and the new message go to the model with the session's
   * tools; tool calls go through the ToolCaller; the loop goes on until the model stops. Every model
   * call holds its estimated cost first (BilledModel; the first call's hold may have been decided
   * already: `held`). Nothing is saved when the first call is
   * refused (NO_CREDITS, or a conversation over MAX_CHAT_INPUT_BYTES) or the turn is aborted or times
   * out. A later call refused for the same reasons ends the turn there: the reply so far is saved,
   * marked as cut, and the refusal is thrown (the stream's `error` event). Each call sends the
   * conversation condensed to CHAT_CONTEXT_BUDGET_TOKENS (chat-context.ts); when it was, the stream
   * says so (`context`) and the answer carries the last notice. The rows keep every message whole;
   * `onSaved` is told what they are once saved.
   */
  async run(
    prepared: PreparedReply,
    sink: TurnSink | undefined,
    signal: AbortSignal,
    /** The user's balance as read for this request (by authentication): a first, cheap refusal. */
    balance: number,
    /** The turn's slot: the save gives it back in the same statement. */
    slot?: TurnSlot,
    held?: HoldDecision,
    onSaved?: (saved: SavedMessages) => void,
  ): Promise<{ message: MessageResponse; context?: ContextNotice }> {
    if (balance <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const { session, content, tools, messages, replyId } = prepared;
    const turnMessages: ModelMessage[] = [];
    const usage = { inputTokens: 0, outputTokens: 0, credits: 0 };
    const toolCalls: ToolCallRecord[] = [];
    // The reply as the stream shows it, in order: each call's text, each tool call (a row keeps them).
    const parts: StoredPart[] = [];
    let refused: AppError | undefined;
    let notice: ContextNotice | undefined;
    for (let turn = 1; turn <= MAX_CHAT_MODEL_TURNS; turn += 1) {
      let answer: BilledAnswer;
      try {
        const sent = turn === 1 ? prepared.first.sent : this.condensed(messages, modelToolsOf(tools));
        if (sent.notice !== undefined && !sameNotice(sent.notice, notice)) {
          sink?.context(sent.notice);
        }
        notice = sent.notice ?? notice;
        this.assertInputSize(sent.bytes);
        answer = await this.modelTurn(
          tools,
          sent.messages,
          sink,
          signal,
          { userId: session.userId, reference: `chat:${replyId}:${turn}` },
          turn === 1 ? held : undefined,
        );
      } catch (err) {
        const cuttable = err instanceof AppError && (err.code === 'NO_CREDITS' || err.code === 'VALIDATION_ERROR');
        if (turn === 1 || !cuttable || signal.aborted) {
          throw err;
        }
        refused = err;
        break;
      }
      usage.inputTokens += answer.usage.inputTokens;
      usage.outputTokens += answer.usage.outputTokens;
      usage.credits += answer.charge.charged;
      const assistant: ModelMessage = { role: 'assistant', content: answer.content };
      messages.push(assistant);
      turnMessages.push(assistant);
      if (answer.text !== '') {
        parts.push({ type: 'text', text: answer.text });
      }
      const uses = answer.content.filter(
        (b): b is Extract<ModelContentBlock, { type: 'tool_use' }> => b.type === 'tool_use',
      );
      if (answer.stopReason !== 'tool_use' || uses.length === 0) {
        break;
      }
      const results: ToolResultBlock[] = [];
      for (const use of uses) {
        parts.push({ type: 'tool_call', id: use.id });
        results.push(await this.callTool(tools, use, sink, signal, toolCalls));
      }
      const toolMessage: ModelMessage = { role: 'user', content: results };
      messages.push(toolMessage);
      turnMessages.push(toolMessage);
    }
    signal.throwIfAborted();
    const { reply: saved, userSeq } = await this.chats.saveTurnRows({
      sessionId: session.id,
      content,
      reply: {
        id: replyId,
        content: contentOf(parts),
        toolCalls,
        modelMessages: turnMessages,
        modelBrief: briefOf(turnMessages),
        parts,
        usage,
        cut: refused !== undefined,
      },
      slot,
    });
    if (slot !== undefined) {
      slot.freed = true;
    }
    onSaved?.({ userSeq, content, reply: saved });
    if (refused !== undefined) {
      throw refused;
    }
    return { message: toMessageResponse(saved), ...(notice === undefined ? {} : { context: notice }) };
  }

  /** The conversation as the model is sent it: condensed to the budget, and what was condensed. */
  private condensed(messages: ModelMessage[], tools: ModelTool[]): CondensedRequest {
    const budgetTokens = this.settings.chatContextBudgetTokens;
    const condensed = condenseConversation(messages, messageBudgetBytes(budgetTokens, SYSTEM_PROMPT, tools));
    const { droppedTurns, omittedResults, cutResults } = condensed;
    if (droppedTurns + omittedResults + cutResults === 0) {
      return { messages: condensed.messages, bytes: condensed.bytes };
    }
    const estimatedTokens = estimateTokens(condensed.bytes + Buffer.byteLength(SYSTEM_PROMPT) + jsonBytes(tools));
    return {
      messages: condensed.messages,
      bytes: condensed.bytes,
      notice: { condensed: true, droppedTurns, omittedResults, cutResults, estimatedTokens, budgetTokens },
    };
  }

  /** VALIDATION_ERROR when the conversation a call would send (`bytes` of JSON) is over MAX_CHAT_INPUT_BYTES. */
  private assertInputSize(bytes: number): void {
    if (bytes > this.settings.maxChatInputBytes) {
      throw new AppError(
        'VALIDATION_ERROR',
        `The conversation has grown to ${bytes} bytes, over the ${this.settings.maxChatInputBytes} a chat turn ` +
          'may send to the model: start a new session',
      );
    }
  }

  private request(tools: RunTool[], messages: ModelMessage[]): ModelRequest {
    return { model: this.settings.defaultModel, system: SYSTEM_PROMPT, messages, tools: modelToolsOf(tools) };
  }

  private async modelTurn(
    tools: RunTool[],
    messages: ModelMessage[],
    sink: TurnSink | undefined,
    signal: AbortSignal,
    billing: { userId: string; reference: string },
    held: HoldDecision | undefined,
  ): Promise<BilledAnswer> {
    const request = this.request(tools, messages);
    const bill = { ...billing, reason: 'chat_turn' as const };
    if (sink === undefined) {
      return this.model.call(request, bill, signal, undefined, held);
    }
    const onEvent = (event: ModelStreamEvent): void => {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
        sink.text(event.delta.text);
      }
    };
    return this.model.call(request, bill, signal, onEvent, held);
  }

  private async callTool(
    tools: RunTool[],
    use: Extract<ModelContentBlock, { type: 'tool_use' }>,
    sink: TurnSink | undefined,
    signal: AbortSignal,
    records: ToolCallRecord[],
  ): Promise<ToolResultBlock> {
    const tool = tools.find((t) => t.name === use.name);
    sink?.toolCall({ id: use.id, site: tool?.siteName ?? 'unknown', tool: tool?.tool ?? use.name, input: use.input });
    let result: ToolResultBlock;
    const record: ToolCallRecord = {
      id: use.id,
      site: tool?.siteName ?? 'unknown',
      tool: tool?.tool ?? use.name,
      input: use.input,
      ok: false,
    };
    try {
      if (tool === undefined) {
        throw new AppError('NOT_FOUND', `No tool named ${use.name}`);
      }
      const site = await this.chats.findSiteOrFail(tool.siteId);
      const called = await this.tools.call({ site, tool: tool.tool, input: use.input, signal });
      record.ok = true;
      record.result = called.result;
      // The user is shown the whole answer; the model, as in a run, its first MAX_TOOL_RESULT_BYTES:
      // it is sent again with every later turn of the session. An MCP tool's text and images reach
      // the model as content blocks.
      const kept = keptResult(called.result, site.protocol);
      result = { type: 'tool_result', tool_use_id: use.id, content: modelContentOf(kept, tool.protocol) };
      sink?.toolResult({ id: use.id, ok: true, result: called.result });
    } catch (err) {
      signal.throwIfAborted();
      if (!(err instanceof AppError)) {
        throw err;
      }
      // A failed tool call is the model's to handle: it gets the error as the tool's result.
      record.error = `${err.code}: ${err.message}`;
      result = { type: 'tool_result', tool_use_id: use.id, content: record.error, is_error: true };
      sink?.toolResult({ id: use.id, ok: false, error: record.error });
    }
    records.push(record);
    return result;
  }
}

/** Whether two notices say the same (a turn's later call condensed as its earlier one did). */
function sameNotice(a: ContextNotice, b: ContextNotice | undefined): boolean {
  return (
    b !== undefined &&
    a.droppedTurns === b.droppedTurns &&
    a.omittedResults === b.omittedResults &&
    a.cutResults === b.cutResults
  );
}

/**
 * Adds a user's text to the conversation. After a reply that was cut following tool calls, the
 * conversation ends with the tool results (a user message): the text joins that message, since the
 * model expects the roles to alternate.
 */
function appendUserText(messages: ModelMessage[], text: string): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'user' && Array.isArray(last.content)) {
    // A new message: the one read belongs to the history, which the turn context cache keeps.
    messages[messages.length - 1] = { ...last, content: [...last.content, { type: 'text', text }] };
  } else {
    messages.push({ role: 'user', content: text });
  }
}
