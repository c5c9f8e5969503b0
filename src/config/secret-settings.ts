import { type Env, type EnvReader } from './env-reader.js';
import { keptSecrets, keptTemporalCodecKey, parseKeyList, parseVaultKeys, type VaultKey } from './setting-parsers.js';

/** Names of settings whose values are secret: never print them. */
export const SECRET_SETTINGS = [
  'JWT_SECRET',
  'VAULT_KEY',
  'TEMPORAL_CODEC_KEY',
  'ANTHROPIC_API_KEY',
  'DATABASE_URL',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_KEY',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'METRICS_TOKEN',
  'STRIPE_SECRET_KEY',
  'STRIPE_WEBHOOK_SECRET',
  'MCP_OAUTH_CLIENTS',
] as const;

/**
 * The secrets of a valid environment: JWT_SECRET, VAULT_KEY and TEMPORAL_CODEC_KEY as set, or
 * generated once and kept under DATA_DIR when unset.
 */
export function readSecrets(
  settings: { dataDir: string; jwtSecret: string; vaultKeys: VaultKey[]; temporalCodecKeys: VaultKey[] },
  env: Env,
  reader: EnvReader,
  problems: string[],
): void {
  const dataDir = settings.dataDir;
  // Secrets that are not set are generated once and kept under DATA_DIR, so a restart keeps tokens
  // and vault entries readable.
  const kept = settings.jwtSecret && env.VAULT_KEY ? undefined : keptSecrets(dataDir);
  settings.jwtSecret = settings.jwtSecret || kept!.jwtSecret;
  if (settings.jwtSecret.length < 32) {
    problems.push('JWT_SECRET must be at least 32 characters');
  }
  settings.vaultKeys = parseVaultKeys(env.VAULT_KEY ?? kept!.vaultKey, problems);
  const payloadKey = reader.str('TEMPORAL_CODEC_KEY') ?? keptTemporalCodecKey(dataDir);
  settings.temporalCodecKeys = parseKeyList('TEMPORAL_CODEC_KEY', payloadKey, problems);
}
