import { standIn } from '../../common/testing/stand-in.js';
import type { CreditsRepository } from '../credits.repository.js';
import { CreditsService } from '../credits.service.js';
import { FakeCreditsRepository } from './fake-credits.repository.js';

/**
 * The real CreditsService over in-memory balances, holds and ledger, for the specs of this feature
 * and of the features that grant or charge credits through it (billing): they reach the balances
 * through this fixture, never through the credits repository.
 */
export function creditsFixture(balances: Record<string, number> = {}) {
  const rows = new FakeCreditsRepository();
  for (const [userId, credits] of Object.entries(balances)) {
    rows.balances.set(userId, credits);
  }
  const service = new CreditsService(standIn<CreditsRepository>(rows), rows.hooks());
  return { rows, service };
}
