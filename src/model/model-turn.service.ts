import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import { CreditsService, creditsFor } from '../credits/credits.service.js';
import {
  type ModelCall,
  type ModelTurnOutput,
  type RunTriggerFields,
  triggerMessage,
} from '../../workflows/contracts.js';
import { ModelClient } from './model-client.js';
import { ModelRepository } from './model.repository.js';

/** A run's model turn: credits checked before, usage charged after (idempotently), usage added to the run. */
@Injectable()
export class ModelTurnService {
  private readonly logger = new Logger('ModelTurn');

  constructor(
    private readonly model: ModelClient,
    private readonly credits: CreditsService,
    private readonly modelRows: ModelRepository,
  ) {}

  /**
   * `creditsChecked`: the caller has just checked the balance and that the run and user are the run's
   * own (a run's first turn, in startRun).
   */
  async turn(
    input: ModelCall,
    reference: string,
    signal: AbortSignal,
    creditsChecked = false,
  ): Promise<ModelTurnOutput> {
    const trigger = creditsChecked ? undefined : await this.assertRunOwnerCredits(input);
    // The run's first message, from its row (see ModelTurnInput.trigger).
    const messages =
      input.triggerFromRow === true && trigger !== undefined
        ? [{ role: 'user' as const, content: triggerMessage(trigger) }, ...input.messages]
        : input.messages;
    const answer = await this.model.create(
      { model: input.model, system: input.system, messages, tools: input.tools },
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

  /**
   * The activity's input is not trusted: the user it names is charged for the turn. It must be the
   * owner of the run as its row records it, and the run must be active; else PERMISSION_DENIED
   * (non-retryable) before the model is called. Folded into the balance check: one round trip, as
   * before, which also reads what triggered the run.
   */
  private async assertRunOwnerCredits(input: ModelCall): Promise<RunTriggerFields> {
    const { runId, userId } = input;
    const found = [runId, userId].every((id) => typeof id === 'string' && UUID.test(id))
      ? await this.modelRows.activeRunTurn(runId, userId)
      : undefined;
    if (found === undefined) {
      // Ids only: enough for an operator to find the forged task in the Temporal UI.
      this.logger.warn(`model turn refused for run ${String(input.runId)}: not an active run of the user it names`);
      throw new AppError('PERMISSION_DENIED', 'The turn is not one of an active run of this user');
    }
    if (found.credits <= 0) {
      throw new AppError('NO_CREDITS', 'Insufficient credit balance');
    }
    return found.trigger;
  }
}
