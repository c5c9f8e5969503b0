import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, linkSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

export interface VaultKey {
  id: string;
  key: Buffer;
}

/**
 * Which X-Forwarded-For entries the client address is taken from (Express `trust proxy`): none, the
 * last n hops, or the entries added by proxies at these addresses / CIDRs (or proxy-addr's names).
 */
export type TrustProxy = false | number | string[];

const PROXY_ADDR_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * `TRUST_PROXY`: unset or false (X-Forwarded-For is ignored), a number of proxy hops in front of the
 * service, or a comma-separated list of the proxies' addresses / CIDRs. `true` is refused: it trusts
 * whatever a client writes into X-Forwarded-For, so every per-address limit could be dodged.
 */
export function parseTrustProxy(raw: string | undefined, problems: string[]): TrustProxy {
  const value = raw?.toLowerCase();
  if (value === undefined || ['false', 'no', 'off', '0'].includes(value)) {
    return false;
  }
  if (['true', 'yes', 'on'].includes(value)) {
    problems.push(
      'TRUST_PROXY=true would take the client address from any X-Forwarded-For a client sends, so per-address ' +
        'limits could be dodged: set the number of proxies in front of the service (e.g. 1) or their ' +
        'addresses / CIDRs (e.g. 10.0.0.0/8,127.0.0.1)',
    );
    return false;
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 32) {
      problems.push(`TRUST_PROXY must be a number of proxy hops from 0 to 32, got "${raw}"`);
      return false;
    }
    return hops;
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => !isProxyAddress(entry));
  if (bad.length > 0 || entries.length === 0) {
    problems.push(
      `TRUST_PROXY must be false, a number of proxy hops, or comma-separated proxy addresses / CIDRs no wider ` +
        `than /8 (IPv4) or /7 (IPv6); not accepted: "${bad.join('", "') || raw}"`,
    );
    return false;
  }
  return entries;
}

function isProxyAddress(entry: string): boolean {
  if (PROXY_ADDR_NAMES.includes(entry)) {
    return true;
  }
  const [address, prefix, ...rest] = entry.split('/');
  if (address === undefined || rest.length > 0) {
    return false;
  }
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!v4 && !ipaddr.IPv6.isValid(address)) {
    return false;
  }
  // A range wider than the widest private one (10.0.0.0/8, fc00::/7) would trust public clients'
  // X-Forwarded-For too: 0.0.0.0/0 is TRUST_PROXY=true in disguise.
  const widest = v4 ? 8 : 7;
  return (
    prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) >= widest && Number(prefix) <= (v4 ? 32 : 128))
  );
}

/** `VAULT_KEY` is a base64 32-byte key, or `id:key,id:key` for rotation; the first key encrypts. */
export function parseVaultKeys(raw: string, problems: string[]): VaultKey[] {
  return parseKeyList('VAULT_KEY', raw, problems);
}

/**
 * A key list in VAULT_KEY's format, read for the setting `name` (VAULT_KEY, TEMPORAL_CODEC_KEY): a
 * base64 32-byte key, or `id:key,id:key`; the first key encrypts, the others only decrypt.
 */
export function parseKeyList(name: string, raw: string, problems: string[]): VaultKey[] {
  const keys: VaultKey[] = [];
  const parts = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const [index, part] of parts.entries()) {
    const colon = part.indexOf(':');
    const id = colon > 0 ? part.slice(0, colon) : 'k1';
    const encoded = colon > 0 ? part.slice(colon + 1) : part;
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32 || key.toString('base64') !== encoded.replace(/\s/g, '')) {
      problems.push(`${name} entry ${index + 1} must be a base64-encoded 32-byte key`);
      continue;
    }
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) {
      problems.push(`${name} entry ${index + 1} has an invalid key id "${id}"`);
      continue;
    }
    if (keys.some((k) => k.id === id)) {
      problems.push(`${name} key id "${id}" appears twice`);
      continue;
    }
    keys.push({ id, key });
  }
  if (parts.length === 0) {
    problems.push(`${name} is empty`);
  }
  return keys;
}

interface KeptSecrets {
  jwtSecret: string;
  vaultKey: string;
}

/** Reads `DATA_DIR/secrets.json`, creating it once (atomically, so concurrent processes agree). */
export function keptSecrets(dataDir: string): KeptSecrets {
  const file = path.join(dataDir, 'secrets.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as KeptSecrets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw err;
    }
  }
  mkdirSync(dataDir, { recursive: true });
  const fresh: KeptSecrets = {
    jwtSecret: randomBytes(48).toString('base64url'),
    vaultKey: `k1:${randomBytes(32).toString('base64')}`,
  };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(fresh, null, 2), { mode: 0o600 });
  try {
    linkSync(tmp, file); // fails if another process created it first; then theirs wins
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw err;
    }
  } finally {
    unlinkSync(tmp);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as KeptSecrets;
}

/**
 * The Temporal payload key kept in `DATA_DIR/temporal-codec-key` when TEMPORAL_CODEC_KEY is unset,
 * created once. A file of its own rather than a field of secrets.json: data directories made before
 * it existed already have a secrets.json, and the API and the worker, started together, must not both
 * add a different key to it. The file is created with link(), so the first process wins and the
 * other reads its key.
 */
export function keptTemporalCodecKey(dataDir: string): string {
  const file = path.join(dataDir, 'temporal-codec-key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw err;
    }
  }
  mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `p1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw err;
    }
  } finally {
    unlinkSync(tmp);
  }
  return readFileSync(file, 'utf8').trim();
}

/**
 * A comma-separated list of exact browser origins (scheme://host[:port], no path). `*` and `null` are
 * refused: the API would then answer any page on the web, including reads of a service that is only
 * reachable from an internal network through the visiting browser. No wildcards in host names either.
 */
export function parseOrigins(name: string, entries: string[], problems: string[]): string[] {
  const origins: string[] = [];
  for (const entry of entries) {
    if (entry.includes('*') || entry.toLowerCase() === 'null') {
      problems.push(
        `${name} lists exact origins such as https://app.example.com; "${entry}" is refused (it would let any ` +
          'web page, or a sandboxed one, read the answers)',
      );
      continue;
    }
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (url === undefined || !['http:', 'https:'].includes(url.protocol) || url.origin !== entry.replace(/\/+$/, '')) {
      problems.push(`${name} entries must be origins such as https://app.example.com, got "${entry}"`);
      continue;
    }
    origins.push(url.origin);
  }
  return origins;
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS as OpenTelemetry defines it: `key=value` pairs separated by commas,
 * values URL-encoded (`authorization=Bearer%20abc,x-team=ops`). The values are never repeated in a
 * problem: they are usually credentials.
 */
export function parseOtlpHeaders(raw: string | undefined, problems: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of (raw ?? '').split(',')) {
    if (entry.trim() === '') {
      continue;
    }
    const at = entry.indexOf('=');
    const name = entry.slice(0, Math.max(at, 0)).trim();
    let value: string | undefined;
    try {
      value = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (at <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || value === undefined || value === '') {
      problems.push(
        'OTEL_EXPORTER_OTLP_HEADERS must be comma-separated name=value pairs with URL-encoded values ' +
          `(entry ${Object.keys(headers).length + 1} is not)`,
      );
      return {};
    }
    headers[name.toLowerCase()] = value;
  }
  return headers;
}
