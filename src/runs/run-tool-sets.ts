import { createHash } from 'node:crypto';

/**
 * JSON with every object's keys sorted (arrays keep their order), so one value has one text whatever
 * order its keys were built in: what a tool set's hash is of.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** The sha256 of a text, in hex: a tool set's name. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
