import { Module } from '@nestjs/common';
import { CreditsModule } from '../credits/credits.module.js';
import { ModelClient } from './model-client.js';
import { ModelTurnService } from './model-turn.service.js';
import { ModelRepository } from './model.repository.js';

/** The model API client, and the billed model turn the worker's activity runs. */
@Module({
  imports: [CreditsModule],
  providers: [ModelClient, ModelTurnService, ModelRepository],
  exports: [ModelClient, ModelTurnService],
})
export class ModelModule {}
