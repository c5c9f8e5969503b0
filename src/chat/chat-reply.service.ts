import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CreditsService, creditsFor } from '../credits/credits.service.js';
import { type ModelAnswer, ModelClient, type ModelStreamEvent } from '../model/model-client.js';
import { buildRunTools, keptResult } from '../runs/run-tools.js';
import { ToolCaller } from '../tools/tool-caller.js';
import {
  modelToolsOf,
  type ModelContentBlock,
  type ModelMessage,
  type RunTool,
  type ToolResultBlock,
  toolResultContent,
} from '../../workflows/contracts.js';
import { type MessageResponse, toMessageResponse, type TurnContext, type TurnSink } from './chat-responses.js';
import type { ToolCallRecord } from './chat.entities.js';
import { ChatRepository } from './chat.repository.js';

/** Model turns one chat message may take (tool use loops) before the reply is cut. */
export const MAX_CHAT_MODEL_TURNS = 10;

/** A chat reply: the model and tool loop of one message, and saving it once it is complete. */
@Injectable()
export class ChatReplyService {
  constructor(
    private readonly chats: ChatRepository,
    private readonly model: ModelClient,
    private readonly tools: ToolCaller,
    private readonly credits: CreditsService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * One chat turn: the conversation so far and the new message go to the model with the session's
   * tools; tool calls go through the ToolCaller; the loop goes on until the model stops. Nothing is
   * saved unless the turn completes (an aborted or timed-out turn leaves no partial reply).
   */
  async reply(
    { session, sites, history }: TurnContext,
    content: string,
    sink: TurnSink | undefined,
    signal: AbortSignal,
    /** The user's balance as read for this request (by authentication). */
    balance: number,
  ): Promise<MessageResponse> {
    if (balance <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    const tools = buildRunTools(sites, (site, tool) => {
      const chosen = session.sites.find((s) => s.siteId === site.id)?.tools ?? null;
      return chosen === null || chosen.includes(tool);
    });
    const messages: ModelMessage[] = [];
    for (const row of history) {
      if (row.role === 'user') {
        messages.push({ role: 'user', content: row.content });
      } else {
        messages.push(...(row.modelMessages ?? [{ role: 'assistant', content: row.content }]));
      }
    }
    const turnMessages: ModelMessage[] = [];
    messages.push({ role: 'user', content });
    const usage = { inputTokens: 0, outputTokens: 0, credits: 0 };
    const toolCalls: ToolCallRecord[] = [];
    const replyId = randomUUID();
    let text = '';
    for (let turn = 1; turn <= MAX_CHAT_MODEL_TURNS; turn += 1) {
      const answer = await this.modelTurn(tools, messages, sink, signal);
      const charge = await this.credits.charge(
        session.userId,
        creditsFor(answer.usage),
        'chat_turn',
        `chat:${replyId}:${turn}`,
      );
      usage.inputTokens += answer.usage.inputTokens;
      usage.outputTokens += answer.usage.outputTokens;
      usage.credits += charge.charged;
      const assistant: ModelMessage = { role: 'assistant', content: answer.content };
      messages.push(assistant);
      turnMessages.push(assistant);
      text += answer.text;
      const uses = answer.content.filter(
        (b): b is Extract<ModelContentBlock, { type: 'tool_use' }> => b.type === 'tool_use',
      );
      if (answer.stopReason !== 'tool_use' || uses.length === 0) {
        break;
      }
      const results: ToolResultBlock[] = [];
      for (const use of uses) {
        results.push(await this.callTool(tools, use, sink, signal, toolCalls));
      }
      const toolMessage: ModelMessage = { role: 'user', content: results };
      messages.push(toolMessage);
      turnMessages.push(toolMessage);
    }
    signal.throwIfAborted();
    const saved = await this.chats.saveTurn({
      sessionId: session.id,
      content,
      reply: { id: replyId, content: text, toolCalls, modelMessages: turnMessages, usage },
    });
    return toMessageResponse(saved);
  }

  private async modelTurn(
    tools: RunTool[],
    messages: ModelMessage[],
    sink: TurnSink | undefined,
    signal: AbortSignal,
  ): Promise<ModelAnswer> {
    const request = {
      model: this.settings.defaultModel,
      system: 'You are the assistant of agentsite. Use the tools of the sites the user connected when they help.',
      messages,
      tools: modelToolsOf(tools),
    };
    if (sink === undefined) {
      return this.model.create(request, signal);
    }
    return this.model.stream(
      request,
      (event: ModelStreamEvent) => {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
          sink.text(event.delta.text);
        }
      },
      signal,
    );
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
      // it is sent again with every later turn of the session.
      result = { type: 'tool_result', tool_use_id: use.id, content: toolResultContent(keptResult(called.result)) };
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
