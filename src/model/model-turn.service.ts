import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { UUID } from '../common/ids.js';
import {
  type ModelCall,
  type ModelTurnOutput,
  type RunTriggerFields,
  triggerMessage,
} from '../../workflows/contracts.js';
import { BilledModel } from './billed-model.js';
import { ModelRepository } from './model.repository.js';

/**
 * A run's model turn: the run and its owner checked, the turn's estimated cost held before the call
 * (BilledModel), its usage charged after (idempotently) and added to the run.
 */
@Injectable()
export class ModelTurnService {
  private readonly logger = new Logger('ModelTurn');

  constructor(
    private readonly model: BilledModel,
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
    // The run's first message, from its row (see ModelTurnInput.messages).
    const messages =
      input.triggerFromRow === true && trigger !== undefined
        ? [{ role: 'user' as const, content: triggerMessage(trigger) }, ...input.messages]
        : input.messages;
    const { charge, ...answer } = await this.model.call(
      { model: input.model, system: input.system, messages, tools: input.tools },
      { userId: input.userId, reference, reason: 'model_turn', runId: input.runId },
      signal,
    );
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
