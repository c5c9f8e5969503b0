import { Module } from '@nestjs/common';
import { CreditsModule } from '../credits/credits.module.js';
import { BilledModel } from './billed-model.js';
import { ModelClient } from './model-client.js';
import { ModelTurnService } from './model-turn.service.js';
import { ModelRepository } from './model.repository.js';

/**
 * The model, billed: BilledModel (every call holds its estimated cost first, then is charged) and the
 * run's model turn. The raw ModelClient is not exported: no caller reaches the model unbilled.
 */
@Module({
  imports: [CreditsModule],
  providers: [ModelClient, BilledModel, ModelTurnService, ModelRepository],
  exports: [BilledModel, ModelTurnService],
})
export class ModelModule {}
