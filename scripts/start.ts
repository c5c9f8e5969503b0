/**
 * `npm start`: brings up PostgreSQL (embedded unless DATABASE_URL), Temporal (dev server unless
 * TEMPORAL_ADDRESS), runs migrations, then the API and the worker; Ctrl-C stops everything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { effectiveDatabaseUrl, effectiveTemporalAddress, loadSettings, SettingsError } from '../src/config/settings.js';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { startDemoSite, type DemoSite } from '../examples/site/demo.js';
import { applyNamespaceRetention } from './runtime/namespace-retention.js';
import { startEmbeddedPostgres, type RunningPostgres } from './runtime/postgres.js';
import { portOpen, stopChild, waitFor } from './runtime/processes.js';
import { ensureTemporalCli, startTemporalDevServer, type RunningTemporal } from './runtime/temporal.js';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (line: string): void => console.log(`[start] ${line}`);

async function main(): Promise<void> {
  const startedAt = Date.now();
  const settings = loadSettings();
  const stops: Array<() => Promise<void>> = [];
  let shuttingDown = false;
  const children: ChildProcess[] = [];

  const shutdown = async (code: number): Promise<never> => {
    if (!shuttingDown) {
      shuttingDown = true;
      say('stopping…');
      await Promise.all(children.map((child) => stopChild(child, 15_000)));
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
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (env.PAYMENT_PROVIDER === undefined || env.PAYMENT_PROVIDER === '') {
      // Development default: test cards work. A production process (docker compose, the image) does not
      // run this script, and without PAYMENT_PROVIDER takes no payments at all.
      env.PAYMENT_PROVIDER = 'test';
      env.ALLOW_TEST_PAYMENTS = 'true';
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
      temporal = await startTemporalDevServer({
        cliPath,
        port: settings.temporalDevPort,
        uiPort: settings.temporalUiPort,
        dbFile: path.join(settings.dataDir, 'temporal.sqlite'),
        namespace: settings.temporalNamespace,
        logFile: path.join(settings.dataDir, 'temporal.log'),
      });
      stops.push(temporal.stop);
      env.TEMPORAL_ADDRESS = temporal.address;
      const days = settings.runHistoryRetentionDays;
      await applyNamespaceRetention(temporal.address, settings.temporalNamespace, days);
      say(`Temporal keeps closed run histories ${days} days (RUN_HISTORY_RETENTION_DAYS)`);
    } else {
      // A cluster's namespace (its retention included) is its operator's: see RUN_HISTORY_RETENTION_DAYS.
      say(`using Temporal at ${settings.temporalAddress}`);
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
    }

    const dataSource = await openDataSource({
      ...settings,
      databaseUrl: env.DATABASE_URL ?? effectiveDatabaseUrl(settings),
    });
    const applied = await runMigrations(dataSource);
    await dataSource.destroy();
    say(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');

    for (const [name, entry] of [
      ['api', 'src/main.js'],
      ['worker', 'src/worker.js'],
    ] as const) {
      // AGENTSITE_NODE_ARGS: extra node flags for the API and worker (profiling: "--prof").
      const nodeArgs = (process.env.AGENTSITE_NODE_ARGS ?? '').split(' ').filter(Boolean);
      const child = spawn(process.execPath, [...nodeArgs, '--enable-source-maps', path.join(distRoot, entry)], {
        env,
        stdio: 'inherit',
      });
      child.on('exit', (code, signal) => {
        if (!shuttingDown) {
          say(`${name} exited (${code ?? signal}); stopping everything`);
          void shutdown(1);
        }
      });
      children.push(child);
    }

    const base = `http://127.0.0.1:${settings.port}`;
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
