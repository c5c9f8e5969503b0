/**
 * `npm start`: brings up PostgreSQL (embedded unless DATABASE_URL), Temporal (dev server unless
 * TEMPORAL_ADDRESS), runs migrations, then the API and the worker. The API, the worker and the dev
 * server are supervised (scripts/runtime/supervisor.ts): one that crashes is restarted with backoff
 * while the others keep serving. Ctrl-C (or SIGTERM) stops everything, as does a child that keeps crashing.
 * `--services-only` (`npm run dev:services`): everything but the API and the worker, for `npm run dev`.
 */
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  effectiveDatabaseUrl,
  effectiveTemporalAddress,
  embeddedDbPasswordFile,
  loadSettings,
  SettingsError,
  type Settings,
} from '../src/config/settings.js';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { startDemoSite, type DemoSite } from '../examples/site/demo.js';
import { answerHelp, loadDotEnv } from './runtime/command-line.js';
import { applyNamespaceRetention } from './runtime/namespace-retention.js';
import { startEmbeddedPostgres, type RunningPostgres } from './runtime/postgres.js';
import { portOpen, waitFor } from './runtime/processes.js';
import { spawnNodeChild, Supervisor } from './runtime/supervisor.js';
import { ensureTemporalCli, startTemporalDevServer, type RunningTemporal } from './runtime/temporal.js';
import { describeTemporalConnection } from '../src/temporal/temporal-connection.js';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (line: string): void => console.log(`[start] ${line}`);

const USAGE = `usage: npm start            (node dist/scripts/start.js [--services-only])
Brings up PostgreSQL (embedded unless DATABASE_URL), Temporal (a dev server unless TEMPORAL_ADDRESS),
runs the migrations, then the API and the worker, supervised; Ctrl-C stops everything.
  --services-only   everything but the API and the worker (npm run dev:services, for npm run dev)
Settings: the environment, over .env in the current directory when there is one (see .env.example).`;

/** The last lines of a log file (the dev server writes its output there, not to ours). */
function lastLines(file: string, count = 40): string[] {
  try {
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, 16_384);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      return buffer.toString('utf8').split('\n').filter(Boolean).slice(-count);
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
}

/** Where this machine reaches a server listening on `host` (a wildcard address: its loopback). */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host.toLowerCase() === 'localhost') {
    return '127.0.0.1';
  }
  if (host.includes(':')) {
    return host === '::' ? '[::1]' : `[${host}]`;
  }
  return host;
}

async function main(): Promise<void> {
  answerHelp(USAGE);
  loadDotEnv(say);
  const startedAt = Date.now();
  const env: NodeJS.ProcessEnv = { ...process.env };
  const testPayments = env.PAYMENT_PROVIDER === undefined || env.PAYMENT_PROVIDER === '';
  if (testPayments) {
    // Development default: test cards work. A production process (docker compose, the image) does not
    // run this script, and without PAYMENT_PROVIDER takes no payments at all.
    env.PAYMENT_PROVIDER = 'test';
    env.ALLOW_TEST_PAYMENTS = 'true';
  }
  let settings: Settings;
  try {
    // The settings the API and the worker will read, this default included: a refusal (the test
    // provider on a HOST beyond loopback, …) stops here, before anything starts.
    settings = loadSettings(env);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
  const stops: Array<() => Promise<void>> = [];
  let shuttingDown = false;
  const supervisor = new Supervisor({
    log: say,
    onGiveUp: (_name, report) => {
      say(report);
      void shutdown(1);
    },
  });

  const shutdown = async (code: number): Promise<never> => {
    if (!shuttingDown) {
      shuttingDown = true;
      supervisor.shutdown();
      say('stopping…');
      // The API and the worker first (in-flight work ends while Temporal and PostgreSQL still run).
      await supervisor.stop('api', 'worker');
      await supervisor.stop('temporal');
      for (const stop of stops.reverse()) {
        await stop().catch((err: unknown) => say(`stop failed: ${String(err)}`));
      }
      say('stopped');
    }
    process.exit(code);
  };
  // embedded-postgres installs exit hooks that end the process as soon as PostgreSQL stops; we stop
  // every component ourselves, in order, so only our handlers may react to the signals.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  try {
    if (testPayments) {
      say('payments: the test provider (tok_visa, tok_chargeDeclined; PAYMENT_PROVIDER=none turns payments off)');
    }
    if (settings.databaseUrl === undefined) {
      if (await portOpen(settings.embeddedPostgresPort)) {
        throw new Error(
          `port ${settings.embeddedPostgresPort} (EMBEDDED_POSTGRES_PORT) is in use: another npm start may be running`,
        );
      }
      say(`starting embedded PostgreSQL (data in ${path.join(settings.dataDir, 'postgres')})`);
      const pg: RunningPostgres = await startEmbeddedPostgres({
        dir: path.join(settings.dataDir, 'postgres'),
        port: settings.embeddedPostgresPort,
        // Generated once (0600) and kept: the API, the worker and `npm run admin` read it there.
        passwordFile: embeddedDbPasswordFile(settings.dataDir),
      });
      stops.push(pg.stop);
      env.DATABASE_URL = pg.url;
    } else {
      say('using PostgreSQL at DATABASE_URL');
    }

    let temporal: RunningTemporal | undefined;
    if (settings.temporalAddress === undefined) {
      if (await portOpen(settings.temporalDevPort)) {
        throw new Error(
          `port ${settings.temporalDevPort} (TEMPORAL_DEV_PORT) is in use: another Temporal server runs there`,
        );
      }
      const cliPath = await ensureTemporalCli(say);
      say(`starting Temporal dev server (${cliPath})`);
      const temporalOptions = {
        cliPath,
        port: settings.temporalDevPort,
        uiPort: settings.temporalUiPort,
        // Payloads are encrypted: the UI decodes them through the API (for admins, see
        // docs/agents-and-runs.md#reading-runs-as-an-operator).
        uiCodecEndpoint: `${settings.publicBaseUrl}/api/temporal-codec`,
        dbFile: path.join(settings.dataDir, 'temporal.sqlite'),
        namespace: settings.temporalNamespace,
        logFile: path.join(settings.dataDir, 'temporal.log'),
      };
      // Supervised too: its state is in the SQLite file, so a restarted server carries on where the
      // killed one stopped, and the API's client and the worker reconnect to it on their own.
      await supervisor.add({
        name: 'temporal',
        start: async () => {
          temporal = await startTemporalDevServer(temporalOptions);
          return {
            process: temporal.process,
            stop: temporal.stop,
            lastOutput: () => lastLines(temporalOptions.logFile),
          };
        },
      });
      if (temporal === undefined) {
        throw new Error('the Temporal dev server did not start');
      }
      env.TEMPORAL_ADDRESS = temporal.address;
      const days = settings.runHistoryRetentionDays;
      await applyNamespaceRetention(temporal.address, settings.temporalNamespace, days);
      say(`Temporal keeps closed run histories ${days} days (RUN_HISTORY_RETENTION_DAYS)`);
    } else {
      // A cluster's namespace (its retention included) is its operator's: see RUN_HISTORY_RETENTION_DAYS.
      say(`using Temporal at ${describeTemporalConnection(settings)}`);
    }

    let demo: DemoSite | undefined;
    if (settings.demoSitePort !== 0) {
      const dir = path.join(settings.dataDir, 'demo-site');
      demo = await startDemoSite({
        dir,
        port: settings.demoSitePort,
        redirectUris: [`${settings.publicBaseUrl}/api/oauth/callback`],
      });
      stops.push(() => demo!.site.stop());
      // The API and worker trust the demo CA (besides any SITE_CA_CERTS) and may reach its loopback port.
      const trusted = path.join(dir, 'trusted-cas.pem');
      const extra = settings.siteCaCerts ? readFileSync(settings.siteCaCerts, 'utf8') : '';
      writeFileSync(trusted, `${extra}\n${readFileSync(demo.caFile, 'utf8')}`);
      env.SITE_CA_CERTS = trusted;
      env.SITE_ALLOW_PRIVATE_HOSTS = [...settings.siteAllowPrivateHosts, `localhost:${settings.demoSitePort}`].join(
        ',',
      );
      // The console suggests it to a new user (GET /api/about).
      env.DEMO_SITE_URL = demo.site.url;
    }

    const dataSource = await openDataSource({
      ...settings,
      databaseUrl: env.DATABASE_URL ?? effectiveDatabaseUrl(settings),
    });
    const applied = await runMigrations(dataSource);
    await dataSource.destroy();
    say(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');

    if (process.argv.includes('--services-only')) {
      // `npm run dev:services`: what `npm run dev` runs against; it restarts the API and the worker itself.
      say(
        `ready: PostgreSQL at ${env.DATABASE_URL?.replace(/:[^:@/]+@/, ':***@')}, Temporal at ${env.TEMPORAL_ADDRESS}`,
      );
      say(`Temporal UI ${temporal?.uiUrl ?? '(external)'}; now run \`npm run dev\` for the API and the worker`);
      return;
    }
    // AGENTSITE_NODE_ARGS: extra node flags for the API and worker (profiling: "--prof").
    const nodeArgs = (process.env.AGENTSITE_NODE_ARGS ?? '').split(' ').filter(Boolean);
    await Promise.all(
      (
        [
          ['api', 'src/main.js'],
          ['worker', 'src/worker.js'],
        ] as const
      ).map(([name, entry]) =>
        supervisor.add({
          name,
          // The worker drains its in-flight activities (WORKER_SHUTDOWN_GRACE_SECONDS) before it is killed.
          start: async () =>
            spawnNodeChild(
              [...nodeArgs, '--enable-source-maps', path.join(distRoot, entry)],
              env,
              name === 'worker' ? (settings.workerShutdownGraceSeconds + 15) * 1000 : 15_000,
            ),
        }),
      ),
    );

    const base = `http://${reachableHost(settings.host)}:${settings.port}`;
    await waitFor(
      'the API',
      async () => {
        const res = await fetch(`${base}/api/health`);
        return res.status === 200;
      },
      120_000,
      300,
    );
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    // One write: whoever reads "ready" (a person, a script) has the addresses in the same chunk.
    console.log(
      [
        `ready in ${seconds} s`,
        `Console     ${settings.publicBaseUrl}/`,
        `API         ${settings.publicBaseUrl}/api`,
        `OpenAPI     ${settings.publicBaseUrl}/api/docs`,
        `Temporal UI ${temporal?.uiUrl ?? `(external Temporal at ${effectiveTemporalAddress(settings)})`}`,
        ...(demo !== undefined
          ? [`Demo site   ${demo.site.url} (CA ${demo.caFile}; user alice / alice-password)`]
          : []),
        'press Ctrl-C to stop',
      ]
        .map((line) => `[start] ${line}`)
        .join('\n'),
    );
  } catch (err) {
    console.error(
      err instanceof SettingsError ? err.message : `[start] ${err instanceof Error ? err.message : String(err)}`,
    );
    await shutdown(1);
  }
}

void main();
