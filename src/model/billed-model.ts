import { Injectable, Logger } from '@nestjs/common';
import {
  type Charge,
  CreditsService,
  creditsFor,
  creditsToReserve,
  type HoldDecision,
  noCredits,
} from '../credits/credits.service.js';
import type { LedgerReason } from '../credits/ledger-entry.js';
import { type ModelAnswer, ModelClient, type ModelRequest, type ModelStreamEvent } from './model-client.js';

/** Who pays for a model call, and the ledger reference that makes its charge happen once. */
export interface ModelBilling {
  userId: string;
  /** The charge's reference; also the key of the credits held while the call is in flight. */
  reference: string;
  reason: Extract<LedgerReason, 'chat_turn' | 'model_turn'>;
  /** A run's turn: its usage is added to the run with the charge. */
  runId?: string;
}

export interface BilledAnswer extends ModelAnswer {
  charge: Charge;
}

/**
 * The only way to the model (ModelModule exports this, not the ModelClient): every call holds its
 * estimated cost before it starts (NO_CREDITS when the owner's balance, less what their other calls
 * in flight hold, does not cover it: decided atomically in PostgreSQL), then is charged its real
 * usage, which releases the hold. A call that fails releases its hold and charges nothing.
 */
@Injectable()
export class BilledModel {
  private readonly logger = new Logger('Model');

  constructor(
    private readonly model: ModelClient,
    private readonly credits: CreditsService,
  ) {}

  /** The credits a request is held for before it is sent. */
  static estimate(request: ModelRequest): number {
    return creditsToReserve([request.system, request.messages, request.tools]);
  }

  /**
   * One model call, streamed to `onEvent` when it is given. `held`: the hold of this call's estimate
   * under its reference, decided already by the caller (CreditsService.holdAfter, in a message of its
   * own statements); the call then holds nothing again, and is refused as `reserve` would refuse it.
   */
  async call(
    request: ModelRequest,
    billing: ModelBilling,
    signal: AbortSignal,
    onEvent?: (event: ModelStreamEvent) => void,
    held?: HoldDecision,
  ): Promise<BilledAnswer> {
    if (held === undefined) {
      await this.credits.reserve(billing.userId, billing.reference, BilledModel.estimate(request));
    } else if (!held.reserved) {
      throw noCredits(BilledModel.estimate(request), held.available);
    }
    let answer: ModelAnswer;
    try {
      answer =
        onEvent === undefined
          ? await this.model.create(request, signal)
          : await this.model.stream(request, onEvent, signal);
    } catch (err) {
      // Nothing was used that the provider bills for an answer we never got: no charge. The hold
      // would expire by itself; released now so the balance is whole for the next call.
      await this.credits.release(billing.userId, billing.reference).catch((releaseErr: unknown) => {
        this.logger.warn(`credit hold not released (it expires): ${String(releaseErr)}`);
      });
      throw err;
    }
    const charge = await this.credits.charge(
      billing.userId,
      creditsFor(answer.usage),
      billing.reason,
      billing.reference,
      billing.runId === undefined
        ? undefined
        : { runId: billing.runId, inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens },
    );
    return { ...answer, charge };
  }
}
