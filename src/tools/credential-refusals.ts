import type { CredentialEntity } from '../vault/credential.entity.js';
import type { SiteEntity } from '../vault/site.entity.js';
import { ToolCallFailure } from '../sites/tool-failure.js';

/** A credential the site refused (401/403) on this many calls in a row is held: not sent until it changes. */
export const REFUSALS_BEFORE_HOLD = 3;
/** Credentials with a run of refusals one process remembers (a few bytes each); the oldest go first. */
const REMEMBERED_CREDENTIALS = 10_000;

/**
 * Counts, per stored credential and generation, the calls in a row that the site answered 401 or 403.
 * Past REFUSALS_BEFORE_HOLD the credential is refused here, before the call takes an outgoing slot, so a
 * junk token spends neither the domain's budget nor its vault's share. Any other answer ends the run;
 * a new generation (the user stores a token, an OAuth refresh or reconnect) starts afresh. Per process:
 * each API and worker process lets at most REFUSALS_BEFORE_HOLD such calls through.
 */
export class CredentialRefusals {
  private readonly runs = new Map<string, { generation: number; refusals: number }>();

  constructor(private readonly limit = REFUSALS_BEFORE_HOLD) {}

  /** TOOL_EXECUTION_ERROR (unauthorized) when this generation of the credential is held. */
  assertNotHeld(site: SiteEntity, credential: Pick<CredentialEntity, 'id' | 'generation'>): void {
    const run = this.runs.get(credential.id);
    if (run === undefined) {
      return;
    }
    if (run.generation !== credential.generation) {
      this.runs.delete(credential.id);
      return;
    }
    if (run.refusals >= this.limit) {
      throw new ToolCallFailure(
        'unauthorized',
        `${site.manifest.name} refused the stored credential on its last ${run.refusals} calls (401/403): ` +
          'it is not sent again until it is replaced (store a new token, or connect again with OAuth)',
      );
    }
  }

  /** Records the site's answer to a call made with this generation of the credential. */
  record(credentialId: string, generation: number, status: number): void {
    if (status !== 401 && status !== 403) {
      this.runs.delete(credentialId);
      return;
    }
    const run = this.runs.get(credentialId);
    const refusals = run !== undefined && run.generation === generation ? run.refusals + 1 : 1;
    this.runs.delete(credentialId);
    if (this.runs.size >= REMEMBERED_CREDENTIALS) {
      const oldest = this.runs.keys().next();
      if (oldest.done !== true) {
        this.runs.delete(oldest.value);
      }
    }
    this.runs.set(credentialId, { generation, refusals });
  }
}
