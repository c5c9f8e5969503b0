import { Injectable } from '@nestjs/common';
import { CreditsService, creditsFor } from '../credits/credits.service.js';
import type { ModelCall, ModelTurnOutput } from '../../workflows/contracts.js';
import { ModelClient } from './model-client.js';

/** A run's model turn: credits checked before, usage charged after (idempotently), usage added to the run. */
@Injectable()
export class ModelTurnService {
  constructor(
    private readonly model: ModelClient,
    private readonly credits: CreditsService,
  ) {}

  /** `creditsChecked`: the caller has just checked the balance (a run's first turn, in startRun). */
  async turn(
    input: ModelCall,
    reference: string,
    signal: AbortSignal,
    creditsChecked = false,
  ): Promise<ModelTurnOutput> {
    if (!creditsChecked) {
      await this.credits.assertCredits(input.userId);
    }
    const answer = await this.model.create(
      { model: input.model, system: input.system, messages: input.messages, tools: input.tools },
      signal,
    );
    const cost = creditsFor(answer.usage);
    const charge = await this.credits.charge(input.userId, cost, 'model_turn', reference, {
      runId: input.runId,
      inputTokens: answer.usage.inputTokens,
      outputTokens: answer.usage.outputTokens,
    });
    return { ...answer, credits: charge.charged };
  }
}
