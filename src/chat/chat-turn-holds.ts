import { Injectable, Logger } from '@nestjs/common';
import { CREDIT_HOLD_TTL_MS, CreditsService, creditsToReserve } from '../credits/credits.service.js';
import type { EarlyHold } from '../model/billed-model.js';

/** Sessions whose last call's estimate a process keeps (the oldest go first beyond it). */
export const EARLY_HOLD_SESSIONS = 10_000;

/**
 * A chat turn's first model call held while the session is read, rather than once it has been read:
 * one round trip off the path to the first text. Its amount is what the session's last call in this
 * process was estimated at, a quarter more, and the new message's own estimate: a conversation grows
 * by the last reply and the new message between two turns. When that does not cover the call's real
 * estimate, the call holds its estimate itself (BilledModel.call) as it would have without; a session
 * this process has not served, or a balance (as authentication read it) under the amount, is held the
 * usual way. The memo is numbers only, keyed by user and session key (a token's hash, never a token).
 */
@Injectable()
export class ChatTurnHolds {
  private readonly logger = new Logger('Chat');
  private readonly last = new Map<string, number>();

  constructor(private readonly credits: CreditsService) {}

  /** The early hold of a turn's first call (`reference`), or undefined when the turn holds as before. */
  early(
    user: { id: string; credits: number },
    session: string,
    content: string,
    reference: string,
  ): EarlyHold | undefined {
    const last = this.last.get(memoKey(user.id, session));
    if (last === undefined) {
      return undefined;
    }
    const amount = earlyHoldAmount(last, content);
    if (user.credits < amount) {
      return undefined;
    }
    const taken = this.credits.hold(user.id, reference, amount, CREDIT_HOLD_TTL_MS).then((held) => held.reserved);
    taken.catch(() => undefined); // the call awaits it (BilledModel.call), or settle does
    return { amount, taken, used: false };
  }

  /** A call of the session was estimated at `credits`: its next turn's early hold starts from it. */
  remember(userId: string, session: string, credits: number): void {
    const key = memoKey(userId, session);
    this.last.delete(key);
    this.last.set(key, credits);
    if (this.last.size > EARLY_HOLD_SESSIONS) {
      this.last.delete(this.last.keys().next().value as string);
    }
  }

  /** A turn that ended before its first call took the early hold over gives it back. */
  async settle(userId: string, reference: string, early: EarlyHold | undefined): Promise<void> {
    if (early === undefined || early.used || !(await early.taken.catch(() => true))) {
      return;
    }
    await this.credits.release(userId, reference).catch((err: unknown) => {
      this.logger.warn(`early credit hold not released (it expires): ${String(err)}`);
    });
  }
}

/** What a turn's first call is held for early: the session's last estimate, a quarter more, and the message's. */
export function earlyHoldAmount(lastEstimate: number, content: string): number {
  return Math.ceil(lastEstimate * 1.25) + creditsToReserve(content);
}

function memoKey(userId: string, session: string): string {
  return `${userId}:${session}`;
}
