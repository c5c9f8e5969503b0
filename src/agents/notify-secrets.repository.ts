import type { DataSource } from 'typeorm';
import type { Reseal, SealedRows, StaleSealed } from '../vault/sealed-rows.js';
import { parseSealedSecret, storedSealedSecret } from './notify-secret.js';

/**
 * The agents' notification signing secrets as `vault:rotate` re-seals them (agents.notify_secret,
 * sealed with the vault key and bound to the agent's id: notify-secret.ts).
 */
export class NotifySecretsRepository implements SealedRows {
  constructor(private readonly dataSource: DataSource) {}

  staleSealed(keyId: string): Promise<StaleSealed[]> {
    return this.dataSource.query(
      `SELECT id::text AS id, id::text AS scope FROM agents
        WHERE notify_secret IS NOT NULL AND split_part(notify_secret, ':', 1) <> $1`,
      [keyId],
    );
  }

  /** Re-seals one agent's secret under its row lock, in a transaction of its own. */
  reseal(id: string, keyId: string, reseal: Reseal): Promise<boolean> {
    return this.dataSource.transaction(async (em) => {
      const rows: Array<{ notify_secret: string }> = await em.query(
        `SELECT notify_secret FROM agents
          WHERE id = $1 AND notify_secret IS NOT NULL AND split_part(notify_secret, ':', 1) <> $2 FOR UPDATE`,
        [id, keyId],
      );
      const sealed = rows[0] === undefined ? undefined : parseSealedSecret(rows[0].notify_secret);
      if (sealed === undefined) {
        return false;
      }
      const resealed = reseal(sealed, { id, scope: id });
      await em.query('UPDATE agents SET notify_secret = $1 WHERE id = $2', [storedSealedSecret(resealed), id]);
      return true;
    });
  }
}
