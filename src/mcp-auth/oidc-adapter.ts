import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { McpAuthRepository } from './mcp-auth.repository.js';

/**
 * oidc-provider's models whose id is a bearer value (a code, a token, a session cookie): stored under
 * the SHA-256 of the id, and their payload keeps no copy of it (`jti` is put back when read).
 * Grants, interactions and registered clients keep their id (it is no credential: an interaction's
 * uid is in the consent page's URL, a grant's id in the database only).
 */
const HASHED_MODELS = new Set([
  'Session',
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'InitialAccessToken',
  'RegistrationAccessToken',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
  'PreAuthorizedCode',
  'ReplayDetection',
]);

/** How often (at most) one process sweeps expired artifacts, in milliseconds. */
const SWEEP_EVERY_MS = 60_000;

export function artifactKey(model: string, id: string): string {
  return HASHED_MODELS.has(model) ? createHash('sha256').update(id).digest('hex') : id;
}

/** What the adapters of one provider share: the repository, and when expired artifacts were last swept. */
export class ArtifactStore {
  private lastSweep = 0;

  constructor(
    readonly repository: McpAuthRepository,
    private readonly onSweepError: (err: unknown) => void,
  ) {}

  /** Deletes expired artifacts (a bounded batch) at most once a minute per process, without waiting for it. */
  sweepSometimes(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) {
      return;
    }
    this.lastSweep = now;
    this.repository.sweepExpired().catch(this.onSweepError);
  }

  adapterFor(model: string): Adapter {
    return new PostgresAdapter(model, this);
  }
}

/** oidc-provider's storage interface over the one table `mcp_authorization_state`. */
class PostgresAdapter implements Adapter {
  private readonly hashed: boolean;

  constructor(
    private readonly model: string,
    private readonly store: ArtifactStore,
  ) {
    this.hashed = HASHED_MODELS.has(model);
  }

  private get repository(): McpAuthRepository {
    return this.store.repository;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const stored: Record<string, unknown> = { ...payload };
    if (this.hashed) {
      delete stored.jti;
    }
    await this.repository.upsertArtifact({
      model: this.model,
      id: artifactKey(this.model, id),
      payload: stored,
      grantId: typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expiresAt: typeof expiresIn === 'number' && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000) : null,
    });
    this.store.sweepSometimes();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const found = await this.repository.findArtifact(this.model, { id: artifactKey(this.model, id) });
    if (found === undefined) {
      return undefined;
    }
    const payload: AdapterPayload = { ...found.payload };
    if (this.hashed) {
      payload.jti = id;
    }
    if (found.consumedAt !== null) {
      payload.consumed = Math.floor(found.consumedAt.getTime() / 1000);
    }
    return payload;
  }

  /**
   * By uid: interactions keep their id, so theirs can be answered; a session's payload has no cookie
   * value to give back, so sessions are never found by uid (only `expiresWithSession` tokens and
   * `interactionDetails` ask, and neither is used here).
   */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (this.hashed) {
      return undefined;
    }
    const found = await this.repository.findArtifact(this.model, { uid });
    return found === undefined ? undefined : { ...found.payload };
  }

  /** Device codes are not enabled. */
  findByUserCode(): Promise<AdapterPayload | undefined> {
    return Promise.resolve(undefined);
  }

  async consume(id: string): Promise<void> {
    await this.repository.consumeArtifact(this.model, artifactKey(this.model, id));
  }

  async destroy(id: string): Promise<void> {
    await this.repository.destroyArtifact(this.model, artifactKey(this.model, id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.repository.destroyArtifactsOfGrant(this.model, grantId);
  }
}
