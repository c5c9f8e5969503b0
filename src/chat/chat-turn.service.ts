import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AuthUser } from '../auth/auth-user.js';
import { AuthenticatedPrefetch } from '../auth/prefetch.js';
import { AppError } from '../common/app-error.js';
import { correlationIdOf } from '../common/correlation.js';
import { toAppError, writeAppError } from '../common/error-filter.js';
import type { ApiReply, ApiRequest, NodeResponse } from '../common/http.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CREDIT_HOLD_TTL_MS, CreditsService, type HoldDecision } from '../credits/credits.service.js';
import { ChatReplyService, type PreparedReply } from './chat-reply.service.js';
import type { TurnContext, TurnSink } from './chat-responses.js';
import { ChatSessionsService } from './chat-sessions.service.js';
import { ChatTurnAbortedError } from './chat-turn-aborted.error.js';
import { ChatRepository, type TurnSlot } from './chat.repository.js';
import type { ChatEvents, ChatReplyDto } from './dto/chat-response.dto.js';
import { sameVersion, turnCheckPrelude, turnCheckResult } from './turn-check.js';
import type { CachedContext } from './turn-context-cache.js';

/** The key the turn route declares with @PrefetchOnAuth: its session and messages are read ahead. */
export const CHAT_TURN_PREFETCH = Symbol('chatTurnPrefetch');

/** Where a chat turn's context, read ahead during authentication, waits for the route. */
const TURN_PREFETCH = Symbol('turnPrefetch');

interface TurnPrefetch {
  userId: string;
  token: string;
  context: Promise<TurnContext>;
}

type TurnRequest = ApiRequest & { [TURN_PREFETCH]?: TurnPrefetch };

/** What answering a turn in its slot takes. */
interface TurnAnswer {
  auth: AuthUser;
  token: string;
  context: TurnContext;
  content: string;
  req: ApiRequest;
  reply: ApiReply;
  /** The reply made ready and its first call's hold (a cached context); or the reply's id to use. */
  first?: { prepared: PreparedReply; held: HoldDecision } | { replyId: string };
}

/** Retry-After of a turn refused because the user's other turns are in progress. */
const TURN_SLOT_RETRY_AFTER_SECONDS = 5;

/** One SSE event; its data is the event's schema in the API document (CHAT_EVENTS). */
function sse<E extends keyof ChatEvents>(res: NodeResponse, event: E, data: ChatEvents[E]): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * A chat turn over HTTP: its context (read ahead during authentication when it can be), SSE or one
 * JSON answer, the CHAT_TIMEOUT cap, a client that goes away, and the error answer.
 */
@Injectable()
export class ChatTurnService implements OnModuleInit {
  private readonly logger = new Logger('Chat');

  constructor(
    private readonly sessions: ChatSessionsService,
    private readonly replies: ChatReplyService,
    private readonly chats: ChatRepository,
    private readonly credits: CreditsService,
    private readonly prefetch: AuthenticatedPrefetch,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** A turn's session and messages are read while authentication finishes (saves a round trip's wait). */
  onModuleInit(): void {
    this.prefetch.register(CHAT_TURN_PREFETCH, (req, userId) => {
      // The router has decoded the route's parameter; the route checks it again against the user.
      const token = (req.params as { token?: unknown }).token;
      // A session whose context this process keeps is not read: its turn checks the context's version.
      if (typeof token !== 'string' || this.sessions.hasCachedTurn(userId, token)) {
        return;
      }
      const context = this.sessions.openTurn(userId, token);
      context.catch(() => undefined); // the route awaits it, and answers its error, once the guards pass
      (req as TurnRequest)[TURN_PREFETCH] = { userId, token, context };
    });
  }

  /**
   * With `Accept: text/event-stream` the answer is an SSE stream of `context` (when the conversation
   * was condensed for the model), `text`, `tool_call`, `tool_result`, then `done` (or `error`); otherwise one JSON answer when the turn ends. The whole
   * turn is capped (CHAT_TIMEOUT); a client that goes away aborts it (STREAM_ABORTED, nothing saved).
   * A user has at most MAX_CONCURRENT_CHAT_TURNS turns in progress (RATE_LIMITED beyond).
   */
  async send(auth: AuthUser, token: string, content: string, req: ApiRequest, reply: ApiReply): Promise<void> {
    const turn = randomUUID();
    const cached = auth.user.credits > 0 ? this.sessions.cachedTurn(auth.user.id, token) : undefined;
    const prepared = cached === undefined ? undefined : this.prepareCached(cached.context, content);
    if (cached !== undefined && prepared !== undefined) {
      return this.sendCached(auth, token, content, cached, prepared, turn, req, reply);
    }
    // Read ahead during authentication (onModuleInit) when it was for this user and token.
    const ahead = (req as TurnRequest)[TURN_PREFETCH];
    // The slot is taken while the context is read: two round trips to PostgreSQL at once rather than
    // one after the other, both before the first text. Held past the turn's own cap: a slot is only
    // taken over once its turn cannot be running.
    const taking = this.chats.takeTurnSlot(auth.user.id, turn, this.settings.maxConcurrentChatTurns, this.slotTtlMs());
    taking.catch(() => undefined); // awaited below, once the context's own error has had precedence
    let context: TurnContext;
    try {
      context = await (ahead !== undefined && ahead.userId === auth.user.id && ahead.token === token
        ? ahead.context
        : this.sessions.openTurn(auth.user.id, token));
    } catch (err) {
      // A turn refused for its session answers that refusal, and gives back the slot it took.
      const taken = await taking.catch(() => null);
      if (taken !== null) {
        await this.freeSlot(auth.user.id, taken, turn);
      }
      throw err;
    }
    const slot = await taking;
    if (slot === null) {
      throw this.rateLimited();
    }
    await this.answerIn(
      { userId: auth.user.id, slot, turn, freed: false },
      { auth, token, context, content, req, reply },
    );
  }

  /** A cached context's reply made ready, when its first call may be held before the turn starts. */
  private prepareCached(context: TurnContext, content: string): PreparedReply | undefined {
    try {
      const prepared = this.replies.prepare(context, content);
      // Over the input limit: the turn answers that after its start, as a context just read would.
      return prepared.first.sent.bytes <= this.settings.maxChatInputBytes ? prepared : undefined;
    } catch {
      return undefined; // the turn takes the ordinary way, which answers the error
    }
  }

  /**
   * A turn of a session whose context this process keeps: one round trip before the turn starts, in
   * which, under the user's lock, the slot is taken, the context's version checked and the first
   * model call's credits held (turn-check.ts, CreditsService.holdAfter). A version that changed (a
   * turn served by another process, the session, its sites or the membership changed, the session
   * deleted) gives the hold back and reads the context as a turn without one does.
   */
  private async sendCached(
    auth: AuthUser,
    token: string,
    content: string,
    cached: CachedContext,
    prepared: PreparedReply,
    turn: string,
    req: ApiRequest,
    reply: ApiReply,
  ): Promise<void> {
    const userId = auth.user.id;
    const { reference, estimate } = prepared.first;
    const decided = await this.credits.holdAfter(
      userId,
      reference,
      estimate,
      CREDIT_HOLD_TTL_MS,
      turnCheckPrelude({
        userId,
        turn,
        sessionId: cached.context.session.id,
        maxSlots: this.settings.maxConcurrentChatTurns,
        slotTtlMs: this.slotTtlMs(),
      }),
    );
    const checked = turnCheckResult(decided.prelude);
    let releasing: Promise<void> | undefined;
    const release = (): Promise<void> => {
      releasing ??= decided.hold.reserved
        ? this.credits.release(userId, reference).catch((err: unknown) => {
            this.logger.warn(
              `credit hold not released (it expires): ${err instanceof Error ? err.message : String(err)}`,
            );
          })
        : Promise.resolve();
      return releasing;
    };
    const current = sameVersion(cached.version, checked.version);
    let context = cached.context;
    if (!current) {
      // Read again, the hold given back (the first call holds again, under the same reference). A
      // turn refused for its session answers that refusal, whether or not a slot was free.
      this.sessions.forgetTurn(userId, token);
      try {
        [context] = await Promise.all([this.sessions.openTurn(userId, token), release()]);
      } catch (err) {
        if (checked.slot !== null) {
          await this.freeSlot(userId, checked.slot, turn);
        }
        throw err;
      }
    }
    let slot = checked.slot;
    try {
      // Found none while one may be free (a same-user turn taking slots one by one): tried that way.
      slot ??= await this.chats.takeTurnSlot(userId, turn, this.settings.maxConcurrentChatTurns, this.slotTtlMs());
    } catch (err) {
      await release();
      throw err;
    }
    if (slot === null) {
      await release();
      throw this.rateLimited();
    }
    const held: TurnSlot = { userId, slot, turn, freed: false };
    return this.answerIn(held, {
      auth,
      token,
      context,
      content,
      req,
      reply,
      first: current ? { prepared, held: decided.hold } : { replyId: prepared.replyId },
    });
  }

  /** Answers the turn in its slot, and gives the slot back unless the turn's save did. */
  private async answerIn(slot: TurnSlot, turn: TurnAnswer): Promise<void> {
    try {
      await this.answer(slot, turn);
    } finally {
      if (!slot.freed) {
        await this.freeSlot(slot.userId, slot.slot, slot.turn);
      }
    }
  }

  /** A slot outlives its turn's own cap: it is only taken over once its turn cannot be running. */
  private slotTtlMs(): number {
    return this.settings.chatTimeoutMs + 60_000;
  }

  private rateLimited(): AppError {
    return new AppError(
      'RATE_LIMITED',
      `At most ${this.settings.maxConcurrentChatTurns} chat turns of a user may be in progress at once`,
      undefined,
      TURN_SLOT_RETRY_AFTER_SECONDS,
    );
  }

  /** Gives a turn's slot back; one not freed expires by itself. */
  private async freeSlot(userId: string, slot: number, turn: string): Promise<void> {
    await this.chats.freeTurnSlot(userId, slot, turn).catch((err: unknown) => {
      this.logger.warn(`chat turn slot not freed (it expires): ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  private async answer(
    slot: TurnSlot,
    { auth, token, context, content, req, reply, first }: TurnAnswer,
  ): Promise<void> {
    const streaming = (req.headers.accept ?? '').includes('text/event-stream');
    const res = reply.raw;
    const controller = new AbortController();
    // The first reason wins: a signal keeps the reason it was first aborted with.
    const timer = setTimeout(() => controller.abort(new ChatTurnAbortedError('timeout')), this.settings.chatTimeoutMs);
    res.on('close', () => {
      if (!res.writableEnded) {
        controller.abort(new ChatTurnAbortedError('client'));
      }
    });
    let sink: TurnSink | undefined;
    if (streaming) {
      // The stream is written on the Node response: Fastify leaves this answer alone.
      reply.hijack();
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();
      sink = {
        context: (notice) => sse(res, 'context', notice),
        text: (delta) => sse(res, 'text', { delta }),
        toolCall: (call) => sse(res, 'tool_call', call),
        toolResult: (result) => sse(res, 'tool_result', result),
      };
    }
    try {
      const ready = first !== undefined && 'prepared' in first;
      const prepared = ready ? first.prepared : this.replies.prepare(context, content, first?.replyId);
      const { message, context: condensed } = await this.replies.run(
        prepared,
        sink,
        controller.signal,
        auth.user.credits,
        slot,
        ready ? first.held : undefined,
        (saved) => this.sessions.turnSaved(auth.user.id, token, saved),
      );
      if (streaming) {
        sse(res, 'done', { messageId: message.id, usage: message.usage });
        res.end();
      } else {
        const answer: ChatReplyDto = { message, ...(condensed === undefined ? {} : { context: condensed }) };
        await reply.code(200).send(answer);
      }
    } catch (err) {
      const ended = controller.signal.reason instanceof ChatTurnAbortedError ? controller.signal.reason.why : undefined;
      let error: AppError;
      if (ended === 'client') {
        const aborted = new AppError('STREAM_ABORTED', 'The client disconnected; the partial response was not saved');
        this.logger.warn(
          `${correlationIdOf(req)} ${aborted.code} (${aborted.statusCode}) session ${context.session.id}: ${aborted.message}`,
        );
        return;
      } else if (ended === 'timeout') {
        error = new AppError(
          'CHAT_TIMEOUT',
          `The AI response exceeded ${Math.round(this.settings.chatTimeoutMs / 1000)} seconds`,
        );
      } else {
        const known = toAppError(err, req);
        if (known === undefined) {
          this.logger.error(`${correlationIdOf(req)} chat turn failed`, err instanceof Error ? err.stack : String(err));
        }
        error = known ?? new AppError('MODEL_ERROR', 'The chat turn failed unexpectedly');
      }
      if (streaming) {
        sse(res, 'error', error.toBody());
        res.end();
      } else {
        writeAppError(reply, error);
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
