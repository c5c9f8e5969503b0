/**
 * `npm run dev`: the API and the worker, restarted whenever the compiled code changes, against a
 * PostgreSQL and a Temporal that already run (`npm run dev:services`, or DATABASE_URL and
 * TEMPORAL_ADDRESS). It runs `tsc --watch` on the project nest-cli.json names; when tsc reports a
 * build without errors that wrote new JavaScript under dist/src, dist/workflows or dist/activities,
 * it rebundles the workflows if they changed and restarts both processes through the supervisor of
 * `npm start`. After a build with errors the processes keep running the code they loaded.
 * `--no-tsc`: compile yourself (an editor's tsc --watch); dev.js then restarts after a pause in the
 * writes to dist/.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { effectiveDatabaseUrl, effectiveTemporalAddress, loadSettings, SettingsError } from '../src/config/settings.js';
import { answerHelp, loadDotEnv } from './runtime/command-line.js';
import { readNestCli } from './runtime/nest-cli.js';
import { portOpen, stopChild } from './runtime/processes.js';
import { spawnNodeChild, Supervisor } from './runtime/supervisor.js';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (line: string): void => console.log(`[dev] ${line}`);

const USAGE = `usage: npm run dev          (node dist/scripts/dev.js [--no-tsc])
Runs the API and the worker, restarted whenever the compiled code changes, against a PostgreSQL and a
Temporal that already run (npm run dev:services, or DATABASE_URL and TEMPORAL_ADDRESS).
  --no-tsc   do not run tsc --watch (compile yourself); restart after a pause in the writes to dist/
Settings: the environment, over .env in the current directory when there is one (see .env.example).`;

/** The compiled code the API and the worker run: a change here restarts them. */
const WATCHED = ['src', 'workflows', 'activities'];
/** How long no file event must arrive before a restart (the last events of a build come late). */
const QUIET_MS = 300;

/** What the workflow bundle is made of (scripts/bundle-workflows.ts): a change here needs a new bundle. */
function needsRebundle(changed: Iterable<string>): boolean {
  for (const file of changed) {
    if (file.startsWith('workflows/') || file === 'src/temporal/failure-converter.js') {
      return true;
    }
  }
  return false;
}

/** Only emitted JavaScript counts (not source maps, declaration files or tsc's build info). */
function isCode(file: string): boolean {
  return file.endsWith('.js');
}

/** host and port of a postgres:// URL, or undefined for a Unix socket (nothing to probe over TCP). */
function tcpTarget(databaseUrl: string): { host: string; port: number } | undefined {
  const url = new URL(databaseUrl);
  if (url.searchParams.get('host')?.startsWith('/') === true || url.hostname === '') {
    return undefined;
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 5432) };
}

async function checkServices(env: NodeJS.ProcessEnv, port: number): Promise<void> {
  const hint = 'start them with `npm run dev:services` (PostgreSQL, Temporal and the demo site, no API or worker)';
  const db = tcpTarget(env.DATABASE_URL!);
  if (db !== undefined && !(await portOpen(db.port, db.host))) {
    throw new Error(`PostgreSQL does not answer at ${db.host}:${db.port}: ${hint}, or set DATABASE_URL`);
  }
  const [temporalHost, temporalPort] = env.TEMPORAL_ADDRESS!.split(/:(?=\d+$)/);
  if (!(await portOpen(Number(temporalPort), temporalHost))) {
    throw new Error(`Temporal does not answer at ${env.TEMPORAL_ADDRESS}: ${hint}, or set TEMPORAL_ADDRESS`);
  }
  if (await portOpen(port)) {
    throw new Error(
      `port ${port} (PORT) is in use: an API runs there already (npm start? use \`npm run dev:services\` instead), ` +
        'or set PORT',
    );
  }
}

async function main(): Promise<void> {
  answerHelp(USAGE);
  loadDotEnv(say);
  const compile = !process.argv.includes('--no-tsc');
  const settings = loadSettings();
  const nest = readNestCli();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: settings.databaseUrl ?? effectiveDatabaseUrl(settings),
    TEMPORAL_ADDRESS: effectiveTemporalAddress(settings),
  };
  if (env.PAYMENT_PROVIDER === undefined || env.PAYMENT_PROVIDER === '') {
    // As `npm start`: test cards work in development.
    env.PAYMENT_PROVIDER = 'test';
    env.ALLOW_TEST_PAYMENTS = 'true';
  }
  // What the API and the worker will read, that default included (the test provider stays on loopback).
  loadSettings(env);
  // The demo site of `npm run dev:services`: trusted and reachable as under `npm start`.
  const trusted = path.join(settings.dataDir, 'demo-site', 'trusted-cas.pem');
  if (settings.demoSitePort !== 0 && existsSync(trusted) && (await portOpen(settings.demoSitePort))) {
    env.SITE_CA_CERTS = trusted;
    env.SITE_ALLOW_PRIVATE_HOSTS = [...settings.siteAllowPrivateHosts, `localhost:${settings.demoSitePort}`].join(',');
    env.DEMO_SITE_URL = `https://localhost:${settings.demoSitePort}`;
  }
  await checkServices(env, settings.port);

  const supervisor = new Supervisor({
    log: say,
    onGiveUp: (_name, report) =>
      say(`${report.replace('stopping everything', 'waiting')}\n[dev] the next change starts it again`),
  });
  let tsc: ChildProcess | undefined;
  const watchers: FSWatcher[] = [];
  let stopping = false;
  const shutdown = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      supervisor.shutdown();
      watchers.forEach((w) => w.close());
      say('stopping…');
      await Promise.all([supervisor.stop(), tsc === undefined ? undefined : stopChild(tsc, 2_000)]);
      say('stopped');
    }
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  const nodeArgs = (process.env.AGENTSITE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const entries = { api: `${nest.entryFile}.js`, worker: path.join(path.dirname(nest.entryFile), 'worker.js') };
  for (const [name, entry] of Object.entries(entries)) {
    await supervisor.add({
      name,
      start: async () => spawnNodeChild([...nodeArgs, '--enable-source-maps', path.join(distRoot, entry)], env, 10_000),
    });
  }
  say(`API on ${settings.publicBaseUrl}/api; watching dist/{${WATCHED.join(',')}} for changes`);

  let changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  const restart = async (): Promise<void> => {
    const files = [...changed];
    changed = new Set();
    if (files.length === 0 || stopping) {
      return;
    }
    if (needsRebundle(files)) {
      const bundled = spawnSync(process.execPath, [path.join(distRoot, 'scripts', 'bundle-workflows.js')], {
        stdio: 'inherit',
      });
      if (bundled.status !== 0) {
        say('the workflow bundle failed (above); the worker keeps the last one');
      }
    }
    const shown = files.slice(0, 3).join(', ') + (files.length > 3 ? `, and ${files.length - 3} more` : '');
    say(`changed: ${shown}; restarting the API and the worker`);
    await Promise.all(Object.keys(entries).map((name) => supervisor.restart(name)));
  };
  /** After a moment of quiet (the last file events of a build arrive after tsc's report): one restart at a time. */
  const scheduleRestart = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      restarting = (restarting ?? Promise.resolve()).then(restart).catch((err: unknown) => {
        say(`restart failed: ${err instanceof Error ? err.message : String(err)}`);
      });
    }, QUIET_MS);
  };
  for (const dir of WATCHED) {
    watchers.push(
      watch(path.join(distRoot, dir), { recursive: true }, (_event, name) => {
        const file = name === null ? '' : `${dir}/${name.split(path.sep).join('/')}`;
        if (!stopping && isCode(file)) {
          changed.add(file);
          // Without our tsc, a pause in the writes is all that tells a build has ended.
          if (!compile) {
            scheduleRestart();
          }
        }
      }),
    );
  }

  if (compile) {
    // tsc writes a build's files as it goes: restart only once it reports the build done, and only
    // on a build without errors (until then the processes keep the code they loaded).
    const tscBin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    tsc = spawn(process.execPath, [tscBin, '-p', nest.tsConfigPath, '--watch', '--preserveWatchOutput'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let partial = '';
    tsc.stdout!.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const done = /Found (\d+) errors?\. Watching for file changes/.exec(line);
        if (done !== null && Number(done[1]) === 0) {
          scheduleRestart();
        } else if (done !== null) {
          say('tsc found errors: the API and the worker keep running the last build without errors');
        }
      }
    });
    tsc.once('exit', (code) => {
      if (!stopping) {
        say(`tsc --watch exited (${code}); stopping`);
        void shutdown(1);
      }
    });
  }
}

main().catch((err: unknown) => {
  console.error(
    err instanceof SettingsError ? err.message : `[dev] ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
});
