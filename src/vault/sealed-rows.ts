import type { Sealed } from './vault-cipher.js';

/** A row sealed under another key than the current one: its id and the other column its additional data binds. */
export interface StaleSealed {
  id: string;
  scope: string;
}

/**
 * The row's value sealed again under the current key (`vault:rotate`); throws when the row does not
 * open, which leaves it as it is.
 */
export type Reseal = (sealed: Sealed, row: StaleSealed) => Sealed;

/** What `vault:rotate` asks of each owner of a table of sealed values (vault's credentials, OAuth's states). */
export interface SealedRows {
  /** The rows sealed under another key than `keyId`. */
  staleSealed(keyId: string): Promise<StaleSealed[]>;
  /**
   * Re-seals one row in a transaction of its own, under its row lock (so a concurrent write never
   * writes over a re-sealed entry): false when it is gone or already sealed under `keyId`.
   */
  reseal(id: string, keyId: string, reseal: Reseal): Promise<boolean>;
}

/** A sealed row as `SELECT key_id, iv, ciphertext, auth_tag` answers it. */
export interface SealedColumns {
  key_id: string;
  iv: Buffer;
  ciphertext: Buffer;
  auth_tag: Buffer;
}

export const sealedOf = (row: SealedColumns): Sealed => ({
  keyId: row.key_id,
  iv: row.iv,
  ciphertext: row.ciphertext,
  authTag: row.auth_tag,
});
