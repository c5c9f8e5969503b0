import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Env, EnvReader } from './env-reader.js';
import { parseHost } from './listen-address.js';
import { type McpOAuthClientSetting, parseMcpOAuthClients } from './mcp-oauth-settings.js';
import { readSecrets } from './secret-settings.js';
import {
  PAYMENT_PROVIDERS,
  type PaymentProviderName,
  readPaymentSettings,
  type StripeSettings,
} from './payment-settings.js';
import { parseOrigins, parseOtlpHeaders, parseTrustProxy, type TrustProxy, type VaultKey } from './setting-parsers.js';
import { type ChatSettings, readChatSettings } from './chat-settings.js';
import { readTemporalAccess, type TemporalAccess } from './temporal-access.js';
import { readWorkerSettings, type WorkerSettings } from './worker-shutdown.js';

export { parseTrustProxy, parseVaultKeys, type TrustProxy, type VaultKey } from './setting-parsers.js';
export type { TemporalAccess, TemporalTls } from './temporal-access.js';
export { DEFAULT_HOST, isLoopbackHost } from './listen-address.js';
export {
  effectiveDatabaseUrl,
  effectiveTemporalAddress,
  EMBEDDED_DB,
  embeddedDbPassword,
  embeddedDbPasswordFile,
  LEGACY_EMBEDDED_DB_PASSWORD,
} from './local-services.js';
import { type McpServerSettings, readMcpServerSettings } from './mcp-server-settings.js';
export { SECRET_SETTINGS } from './secret-settings.js';
export {
  PAID_TIERS,
  PAYMENT_PROVIDERS,
  type PaidTier,
  type PaymentProviderName,
  type StripeSettings,
} from './payment-settings.js';

/** Every setting of the service, validated once at start-up. Secrets are marked so they are never logged. */
export interface Settings extends TemporalAccess, WorkerSettings, ChatSettings {
  port: number;
  /** The address the API (and the worker's HTTP server) listen on: loopback unless HOST says otherwise. */
  host: string;
  publicBaseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Connections this process's pool may open: (API + worker processes) × this must fit PostgreSQL's max_connections. */
  databasePoolMax: number;
  temporalAddress: string | undefined;
  temporalNamespace: string;
  temporalTaskQueue: string;
  /** How long an execution of an agent's queue lasts before it continues as new (after its current run). */
  agentQueueExecutionSeconds: number;
  /**
   * Runs an agent may have waiting: a webhook past it is refused (RATE_LIMITED, Retry-After) before it
   * is accepted. The queue travels whole from one execution of the agent's queue to the next, and
   * Temporal limits what one continue-as-new may carry (2 MB by default, a few hundred bytes a run).
   */
  maxQueuedRuns: number;
  temporalCliPath: string | undefined;
  embeddedPostgresPort: number;
  temporalDevPort: number;
  temporalUiPort: number;
  /** Keys of the Temporal payload codec (TEMPORAL_CODEC_KEY): the first encrypts, the others only decrypt. */
  temporalCodecKeys: VaultKey[];
  /** Browser origins of the Temporal UI allowed to call the codec endpoint (CORS). */
  temporalUiOrigins: string[];
  /** Browser origins allowed to call the API (CORS); empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Days Temporal keeps a closed run's workflow history (the namespace's retention; `npm start` applies it). */
  runHistoryRetentionDays: number;
  /** Days the service keeps a run (row, archived timeline, Temporal execution); undefined = forever. */
  runRetentionDays: number | undefined;
  jwtSecret: string;
  jwtTtlSeconds: number;
  vaultKeys: VaultKey[];
  oauthClientId: string;
  /** Clients registered in advance at MCP servers' authorization servers, by issuer (MCP_OAUTH_CLIENTS). */
  mcpOAuthClients: Record<string, McpOAuthClientSetting>;
  /**
   * The URL of the service's Client ID Metadata Document, its client_id at MCP authorization servers
   * that support it (MCP_CLIENT_METADATA_URL; default PUBLIC_BASE_URL/api/oauth/client-metadata). Used
   * only when https.
   */
  mcpClientMetadataUrl: string;
  /** agentsite's own MCP endpoint ({PUBLIC_BASE_URL}/mcp) and its authorization server for MCP clients. */
  mcpServer: McpServerSettings;
  /**
   * Where the OAuth callback sends the browser with code, state, iss or error. undefined (unset): the
   * console's completion page when the console is built, else a page or JSON; null (`none`): never
   * redirect, always the page or JSON.
   */
  oauthCompleteUrl: string | null | undefined;
  siteCaCerts: string | undefined;
  siteAllowPrivateHosts: string[];
  outgoingCallsPerMinute: number;
  /** Of the per-domain budget, what the sites of one vault (a user's, or a workspace's) may use. */
  outgoingCallsPerMinutePerUser: number;
  demoSitePort: number;
  /** The demo site's address, shown by the console to a first-time user (`npm start` sets it); undefined: none. */
  demoSiteUrl: string | undefined;
  anthropicApiKey: string | undefined;
  anthropicBaseUrl: string | undefined;
  defaultModel: string;
  sessionTtlSeconds: number;
  /**
   * Lifetime of an entry of the in-process caches (users with their revoked tokens, vault sites with their credentials), a safety net
   * behind the invalidation that LISTEN/NOTIFY brings; 0 turns the caches off.
   */
  cacheTtlSeconds: number;
  rateLimitWindowSeconds: number;
  rateLimitPerUser: number;
  rateLimitPerIp: number;
  /** Sign-in attempts (login and register) per client address per window. */
  authAttemptsPerIp: number;
  authAttemptsWindowSeconds: number;
  /** Accounts one client address (IPv6: its /64) may register a day; the next answers RATE_LIMITED. */
  registrationsPerAddressPerDay: number;
  /** Credits a new account starts with; 0: none until an admin grants them (PATCH /api/admin/users/:id). */
  signupCredits: number;
  /** Failed logins per account (any address) per window; the next attempt answers RATE_LIMITED. */
  loginFailuresPerAccount: number;
  loginFailureWindowSeconds: number;
  /** scrypt cost N of new password hashes (r=8, p=1); weaker stored hashes are upgraded at login. */
  passwordScryptN: number;
  /** Password hashes computed at once by one process, and how many more may wait for a slot. */
  passwordHashConcurrency: number;
  passwordHashQueue: number;
  trustProxy: TrustProxy;
  logLevel: LogLevel;
  /** OTLP/HTTP collector base URL (spans go to `<it>/v1/traces`); undefined = no tracing at all. */
  otelExporterOtlpEndpoint: string | undefined;
  /** Headers sent with every export (a hosted collector's API key): secret. */
  otelExporterOtlpHeaders: Record<string, string>;
  /** Who takes payments: `none` (no payments possible), `test` (test cards; needs allowTestPayments) or `stripe`. */
  paymentProvider: PaymentProviderName;
  allowTestPayments: boolean;
  /** ALLOW_TEST_PAYMENTS_ON_NETWORK: the test provider on a HOST that is not loopback (a shared test network). */
  allowTestPaymentsOnNetwork: boolean;
  /** Stripe's settings; set (and complete) exactly when paymentProvider is `stripe`. */
  stripe: StripeSettings | undefined;
  /** The scrapers' credential for GET /api/metrics and the worker's /metrics (admins' tokens also work on the API). */
  metricsToken: string | undefined;
  /** Distinct site domains the metrics label by name (first seen first); later ones are labelled `other`. */
  metricsDomainLabels: number;
  /** The worker's own HTTP server (health and metrics); undefined: none. */
  workerHttpPort: number | undefined;
}

export type LogLevel = 'error' | 'warn' | 'log' | 'debug';

/** OWASP's scrypt parameters for passwords: N=2^17, r=8, p=1 (128 MiB and ~0.3 s of one core per hash). */
export const OWASP_SCRYPT_N = 2 ** 17;
/** The lowest PASSWORD_SCRYPT_N accepted: below 2^14 a hash is too cheap to be worth storing. */
export const MIN_SCRYPT_N = 2 ** 14;
const MAX_SCRYPT_N = 2 ** 20;

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n  - ${problems.join('\n  - ')}`);
    this.name = 'SettingsError';
  }
}

/** Not claude-sonnet-4-5: Anthropic retires it on 2026-11-30 (the SDK warns on every call). */
const DEFAULT_MODEL = 'claude-sonnet-4-6';

/**
 * Temporal's retention of closed workflows: at least 1 day (Temporal's minimum), at most 90 (Temporal
 * Cloud's maximum). Thirty days (ARCHITECTURE's default) leave operators time to read a run's
 * history in the Temporal UI; the service keeps every ended run's timeline itself, so nothing users
 * read depends on it.
 */
export const DEFAULT_RUN_HISTORY_RETENTION_DAYS = 30;
const MAX_RUN_HISTORY_RETENTION_DAYS = 90;
/**
 * A vault's default share of a domain's outgoing budget: half of it (at least 1), so that one account
 * (or one junk token) cannot hold a whole domain's budget and other users still get calls through.
 */
export function defaultVaultShare(outgoingCallsPerMinute: number): number {
  return Math.max(1, Math.ceil(outgoingCallsPerMinute / 2));
}

/** Site domains the metrics name, per process: manifests are anyone's, so their domains are not a bounded set. */
export const DEFAULT_METRICS_DOMAIN_LABELS = 50;

/** RUN_RETENTION_DAYS: from a day to a century. */
const MAX_RUN_RETENTION_DAYS = 36_500;

/**
 * Reads the settings from the environment. Problems are collected and reported together,
 * each naming its variable, so one start-up shows every mistake at once.
 */
export function loadSettings(env: Env = process.env): Settings {
  const problems: string[] = [];
  const reader = new EnvReader(env, problems);

  const port = reader.int('PORT', 3000, 1, 65535);
  const host = parseHost(reader.str('HOST'), problems);
  const outgoingCallsPerMinute = reader.int('OUTGOING_CALLS_PER_MINUTE', 10, 1, 1_000_000);
  const dataDir = path.resolve(reader.str('DATA_DIR') ?? '.data');
  const publicBaseUrl = (reader.url('PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(
    /\/+$/,
    '',
  );
  const databaseUrl = reader.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const temporalAddress = reader.str('TEMPORAL_ADDRESS');
  if (temporalAddress !== undefined && !/^[^\s:/]+:\d{1,5}$/.test(temporalAddress)) {
    problems.push(`TEMPORAL_ADDRESS must be host:port, got "${temporalAddress}"`);
  }
  const temporalDevPort = reader.int('TEMPORAL_DEV_PORT', 7233, 1, 65535);
  const temporalAccess = readTemporalAccess(reader, problems, temporalAddress);
  const temporalUiPort = reader.int('TEMPORAL_UI_PORT', temporalDevPort + 1000, 1, 65535);

  const settings: Settings = {
    port,
    host,
    publicBaseUrl,
    dataDir,
    databaseUrl,
    databasePoolMax: reader.int('DATABASE_POOL_MAX', 20, 2, 1000),
    temporalAddress,
    ...temporalAccess,
    temporalNamespace: reader.str('TEMPORAL_NAMESPACE') ?? 'default',
    temporalTaskQueue: reader.str('TEMPORAL_TASK_QUEUE') ?? 'agentsite',
    agentQueueExecutionSeconds: reader.int('AGENT_QUEUE_EXECUTION_SECONDS', 600, 1, 86400),
    maxQueuedRuns: reader.int('MAX_QUEUED_RUNS', 1000, 1, 2000),
    temporalCliPath: reader.str('TEMPORAL_CLI_PATH'),
    embeddedPostgresPort: reader.int('EMBEDDED_POSTGRES_PORT', 54329, 1, 65535),
    temporalDevPort,
    temporalUiPort,
    temporalCodecKeys: [],
    temporalUiOrigins: temporalUiOrigins(
      reader.list('TEMPORAL_UI_ORIGIN'),
      temporalUiPort,
      reader.str('NODE_ENV') === 'production',
      problems,
    ),
    corsOrigins: parseOrigins('CORS_ORIGINS', reader.list('CORS_ORIGINS'), problems),
    runHistoryRetentionDays: reader.int(
      'RUN_HISTORY_RETENTION_DAYS',
      DEFAULT_RUN_HISTORY_RETENTION_DAYS,
      1,
      MAX_RUN_HISTORY_RETENTION_DAYS,
    ),
    runRetentionDays:
      reader.str('RUN_RETENTION_DAYS') === undefined
        ? undefined
        : reader.int('RUN_RETENTION_DAYS', 0, 1, MAX_RUN_RETENTION_DAYS),
    jwtSecret: reader.str('JWT_SECRET') ?? '',
    jwtTtlSeconds: reader.int('JWT_TTL_SECONDS', 3600, 30, 30 * 24 * 3600),
    vaultKeys: [],
    oauthClientId: reader.str('OAUTH_CLIENT_ID') ?? 'agentsite',
    mcpOAuthClients: parseMcpOAuthClients(reader.str('MCP_OAUTH_CLIENTS'), problems),
    mcpClientMetadataUrl:
      reader.url('MCP_CLIENT_METADATA_URL', ['https:']) ?? `${publicBaseUrl}/api/oauth/client-metadata`,
    mcpServer: readMcpServerSettings(reader),
    oauthCompleteUrl:
      reader.str('OAUTH_COMPLETE_URL')?.toLowerCase() === 'none'
        ? null
        : reader.url('OAUTH_COMPLETE_URL', ['http:', 'https:']),
    siteCaCerts: reader.str('SITE_CA_CERTS'),
    siteAllowPrivateHosts: reader.list('SITE_ALLOW_PRIVATE_HOSTS').map((h) => h.toLowerCase()),
    outgoingCallsPerMinute,
    outgoingCallsPerMinutePerUser: reader.int(
      'OUTGOING_CALLS_PER_MINUTE_PER_USER',
      defaultVaultShare(outgoingCallsPerMinute),
      1,
      1_000_000,
    ),
    demoSitePort: reader.int('DEMO_SITE_PORT', 8443, 0, 65535),
    demoSiteUrl: reader.url('DEMO_SITE_URL', ['https:']),
    anthropicApiKey: reader.str('ANTHROPIC_API_KEY'),
    anthropicBaseUrl: reader.url('ANTHROPIC_BASE_URL', ['http:', 'https:']),
    defaultModel: reader.str('DEFAULT_MODEL') ?? DEFAULT_MODEL,
    sessionTtlSeconds: reader.int('SESSION_TTL_SECONDS', 86400, 1, 365 * 86400),
    ...readChatSettings(reader),
    cacheTtlSeconds: reader.int('CACHE_TTL_SECONDS', 30, 0, 3600),
    rateLimitWindowSeconds: reader.int('RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86400),
    rateLimitPerUser: reader.int('RATE_LIMIT_PER_USER', 600, 1, 1_000_000),
    rateLimitPerIp: reader.int('RATE_LIMIT_PER_IP', 1200, 1, 1_000_000),
    authAttemptsPerIp: reader.int('AUTH_ATTEMPTS_PER_IP', 20, 1, 1_000_000),
    authAttemptsWindowSeconds: reader.int('AUTH_ATTEMPTS_WINDOW_SECONDS', 60, 1, 86400),
    registrationsPerAddressPerDay: reader.int('REGISTRATIONS_PER_ADDRESS_PER_DAY', 5, 1, 1_000_000),
    signupCredits: reader.int('SIGNUP_CREDITS', 100, 0, 1_000_000_000),
    loginFailuresPerAccount: reader.int('LOGIN_FAILURES_PER_ACCOUNT', 10, 1, 1_000_000),
    loginFailureWindowSeconds: reader.int('LOGIN_FAILURE_WINDOW_SECONDS', 900, 1, 86400),
    passwordScryptN: reader.int('PASSWORD_SCRYPT_N', OWASP_SCRYPT_N, MIN_SCRYPT_N, MAX_SCRYPT_N),
    passwordHashConcurrency: reader.int('PASSWORD_HASH_CONCURRENCY', 2, 1, 64),
    passwordHashQueue: reader.int('PASSWORD_HASH_QUEUE', 16, 0, 10_000),
    trustProxy: parseTrustProxy(reader.str('TRUST_PROXY'), problems),
    logLevel: reader.oneOf('LOG_LEVEL', ['error', 'warn', 'log', 'debug'] as const, 'log'),
    otelExporterOtlpEndpoint: reader.url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
    otelExporterOtlpHeaders: parseOtlpHeaders(reader.str('OTEL_EXPORTER_OTLP_HEADERS'), problems),
    paymentProvider: reader.oneOf('PAYMENT_PROVIDER', PAYMENT_PROVIDERS, 'none'),
    allowTestPayments: reader.bool('ALLOW_TEST_PAYMENTS', false),
    allowTestPaymentsOnNetwork: reader.bool('ALLOW_TEST_PAYMENTS_ON_NETWORK', false),
    stripe: undefined,
    metricsToken: reader.str('METRICS_TOKEN'),
    metricsDomainLabels: reader.int('METRICS_DOMAIN_LABELS', DEFAULT_METRICS_DOMAIN_LABELS, 1, 10_000),
    workerHttpPort:
      reader.str('WORKER_HTTP_PORT') === undefined ? undefined : reader.int('WORKER_HTTP_PORT', 0, 1, 65535),
    ...readWorkerSettings(reader, problems),
  };

  settings.stripe = readPaymentSettings(settings, reader, problems);

  if (settings.metricsToken !== undefined && settings.metricsToken.length < 32) {
    // A long-lived bearer credential that nothing rate limits per guess: it must be unguessable.
    problems.push('METRICS_TOKEN must be at least 32 characters (e.g. openssl rand -hex 32)');
  }
  if ((settings.passwordScryptN & (settings.passwordScryptN - 1)) !== 0) {
    problems.push(`PASSWORD_SCRYPT_N must be a power of two, got "${settings.passwordScryptN}"`);
  }
  if (settings.siteCaCerts !== undefined) {
    try {
      readFileSync(settings.siteCaCerts);
    } catch {
      problems.push(`SITE_CA_CERTS names a file that cannot be read: ${settings.siteCaCerts}`);
    }
  }

  if (problems.length === 0) {
    readSecrets(settings, env, reader, problems);
  }
  if (problems.length > 0) {
    throw new SettingsError(problems);
  }
  return settings;
}

/**
 * `TEMPORAL_UI_ORIGIN`: the origins (scheme://host[:port]) of the Temporal UI pages that may call the
 * codec endpoint. Default: the dev UI that `npm start` runs, under both of its loopback names; in
 * production (NODE_ENV=production, as the image sets it) none: only the origins configured.
 */
function temporalUiOrigins(entries: string[], uiPort: number, production: boolean, problems: string[]): string[] {
  if (entries.length === 0) {
    return production ? [] : [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`];
  }
  return parseOrigins('TEMPORAL_UI_ORIGIN', entries, problems);
}
