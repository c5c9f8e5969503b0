import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { preparedStatement } from '../common/database/prepared-statement.js';
import type { RunUsage } from './run.entity.js';

/** Adds a model turn's tokens and credits to the run's totals. */
const ADD_USAGE_QUERY =
  'UPDATE runs SET usage = jsonb_build_object(' +
  "'inputTokens', (usage->>'inputTokens')::bigint + $2, " +
  "'outputTokens', (usage->>'outputTokens')::bigint + $3, " +
  "'credits', (usage->>'credits')::bigint + $4) " +
  'WHERE id = $1';

/**
 * The SQL of a run's usage (`runs.usage`), written with the charge of each of the run's model turns:
 * CreditsService calls it through the hook RunsModule registers, in the charge's transaction.
 */
@Injectable()
export class RunUsageRepository {
  async add(em: EntityManager, runId: string, usage: RunUsage): Promise<void> {
    await em.query(preparedStatement('runs_add_usage', ADD_USAGE_QUERY), [
      runId,
      usage.inputTokens,
      usage.outputTokens,
      usage.credits,
    ]);
  }
}
