/**
 * What every benchmark driver starts before the service (run.ts, soak.ts, profile-calls.ts): a directory
 * of its own, PostgreSQL, Temporal, the reference site and the fake model; and the user every driver
 * measures with (an admin, a user with credits to spare, the site in the user's vault with a token).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunningPostgres, startEmbeddedPostgres } from '../scripts/runtime/postgres.js';
import { freePort } from '../scripts/runtime/processes.js';
import { ensureTemporalCli, type RunningTemporal, startTemporalDevServer } from '../scripts/runtime/temporal.js';
import { FakeModel } from '../test/fixtures/fake-model.js';
import type { ReferenceSite } from '../examples/site/site.js';
import { TEST_ENV } from '../test/setup/shared-runtime.js';
import { registerAdmin } from '../test/utils/admin.js';
import type { Http } from '../test/utils/http.js';
import { type TestSites, testSites } from '../test/utils/site.js';
import type { Stack } from '../test/utils/stack.js';
import { registerUser, type TestUser } from '../test/utils/users.js';

export interface BenchBackends {
  workDir: string;
  postgres: RunningPostgres;
  postgresPort: number;
  temporal: RunningTemporal;
  sites: TestSites;
  /** The reference site, with limits no benchmark reaches. */
  site: ReferenceSite;
  model: FakeModel;
  /** Stops the model, the sites, Temporal and PostgreSQL; the directory goes unless BENCH_KEEP=1. */
  stop(): Promise<void>;
}

export interface BackendOptions {
  /** PostgreSQL's extra server flags (benchmark 11's statement tracking). */
  postgresFlags?: string[];
  /** Another Temporal than the dev server (BENCH_TEMPORAL=cluster), started on this PostgreSQL. */
  temporal?: (postgres: RunningPostgres, port: number, workDir: string) => Promise<RunningTemporal>;
}

/**
 * Starts the backends with `npm start`'s durability: PostgreSQL with fsync, synchronous commits and
 * full-page writes (the tests turn them off, the bench does not), and the dev server's state in a SQLite
 * file rather than in memory. Points the test utilities (Stack, Cluster) at them.
 */
export async function startBackends(
  name: string,
  log: (line: string) => void,
  options: BackendOptions = {},
): Promise<BenchBackends> {
  const workDir = mkdtempSync(path.join(tmpdir(), `agentsite-${name}-`));
  chmodSync(workDir, 0o755);
  const postgresPort = await freePort();
  const postgres = await startEmbeddedPostgres({
    dir: path.join(workDir, 'postgres'),
    port: postgresPort,
    ...(options.postgresFlags !== undefined ? { extraFlags: options.postgresFlags } : {}),
  });
  const temporal =
    options.temporal !== undefined
      ? await options.temporal(postgres, postgresPort, workDir)
      : await startTemporalDevServer({
          cliPath: await ensureTemporalCli(log),
          port: await freePort(),
          namespace: 'default',
          dbFile: path.join(workDir, 'temporal.sqlite'),
          logFile: path.join(workDir, 'temporal.log'),
        });
  process.env[TEST_ENV.databaseUrl] = postgres.url;
  process.env[TEST_ENV.temporalAddress] = temporal.address;
  process.env[TEST_ENV.workDir] = workDir;
  const sites = await testSites();
  const site = await sites.start({ limitPerToken: 1_000_000, limitPerIp: 1_000_000 });
  const model = await FakeModel.start();
  return {
    workDir,
    postgres,
    postgresPort,
    temporal,
    sites,
    site,
    model,
    async stop() {
      await model.stop();
      await sites.stopAll();
      await temporal.stop();
      await postgres.stop();
      if (process.env.BENCH_KEEP === '1') {
        log(`kept ${workDir} (BENCH_KEEP=1): the processes' logs and data`);
      } else {
        rmSync(workDir, { recursive: true, force: true });
      }
    },
  };
}

/** The user a driver measures with, and the site in its vault. */
export interface BenchUser {
  user: TestUser;
  adminToken: string;
  siteId: string;
  /** The site's API token kept in the user's vault (the floor calls the site with it too). */
  apiToken: string;
  auth: { authorization: string };
}

/** Registers an admin and a user with credits to spare, and adds the site to the user's vault. */
export async function benchUser(api: Http, stack: Pick<Stack, 'env'>, site: ReferenceSite): Promise<BenchUser> {
  const admin = await registerAdmin(api, stack);
  const user = await registerUser(api);
  await api.patch(`/api/admin/users/${user.id}`, { tier: 'harness', credits: 100_000_000 }, { token: admin.token });
  const siteId = (await api.post('/api/vault/sites', { url: site.url }, { token: user.token })).body.id as string;
  const apiToken = site.issueApiToken('alice').token;
  await api.post(`/api/vault/sites/${siteId}/token`, { token: apiToken }, { token: user.token });
  return { user, adminToken: admin.token, siteId, apiToken, auth: { authorization: `Bearer ${user.token}` } };
}
