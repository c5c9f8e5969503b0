import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Connection } from '@temporalio/client';
import YAML from 'yaml';
import pg from 'pg';
import { loadSettings, PAYMENT_PROVIDERS, parseTrustProxy, SettingsError } from '../../src/config/settings.js';
import { openDataSource, runMigrations } from '../../src/database/data-source.js';
import { startEmbeddedPostgres } from '../../scripts/runtime/postgres.js';
import { freePort } from '../../scripts/runtime/processes.js';
import { testEnv } from '../setup/shared-runtime.js';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../scripts/runtime/temporal.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/runtime/temporal-cluster.js';

const root = process.cwd();
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/**
 * Every variable loadSettings reads, found by watching it read an empty environment, and one that
 * names each payment provider (whose own settings are read only then; the missing ones refused).
 */
function settingNames(): string[] {
  const names = new Set<string>();
  const watched = (start: Record<string, string>): Record<string, string | undefined> =>
    new Proxy(
      { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'names-')), ...start } as Record<string, string | undefined>,
      {
        get(target, name) {
          if (typeof name === 'string') {
            names.add(name);
          }
          return target[name as string];
        },
      },
    );
  loadSettings(watched({}));
  for (const provider of PAYMENT_PROVIDERS) {
    try {
      loadSettings(watched({ PAYMENT_PROVIDER: provider }));
    } catch {
      // Refused for the settings this provider needs and the empty environment lacks: read all the same.
    }
  }
  // The runtime's own variable (the image sets production), not a setting of .env: an empty NODE_ENV
  // in a compose .env would override the image's.
  names.delete('NODE_ENV');
  return [...names].sort();
}

/** The heading in .env.example after which come the variables only docker-compose.yml reads. */
const COMPOSE_ONLY_HEADING = '# --- docker compose only';

function envNames(text: string): string[] {
  return text
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
}

/** The service's settings in .env.example (before the compose-only section). */
function envExampleNames(): string[] {
  return envNames(read('.env.example').split(COMPOSE_ONLY_HEADING)[0]!);
}

function composeOnlyNames(): string[] {
  const [, composeOnly] = read('.env.example').split(COMPOSE_ONLY_HEADING);
  return envNames(composeOnly ?? '');
}

/** Variables whose value is a secret: compose must require them, never default them. */
const SECRET_NAME = /PASSWORD|PWD|SECRET|_KEY$|TOKEN|DATABASE_URL/;

/** The compose file, and the override that swaps the temporal* services for Temporal Cloud. */
const COMPOSE_FILES = ['docker-compose.yml', 'docker-compose.temporal-cloud.yml'];

type Service = Record<string, any>;
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

/** docker-compose.yml as compose reads it before interpolation (YAML merge keys resolved). */
function compose(): Compose {
  return YAML.parse(read('docker-compose.yml'), { merge: true }) as Compose;
}

/** Services others wait for to *complete* (schema, namespace): they run once and exit. */
function oneShotServices(services: Record<string, Service>): Set<string> {
  const names = new Set<string>();
  for (const service of Object.values(services)) {
    for (const [name, dependency] of Object.entries((service.depends_on ?? {}) as Record<string, any>)) {
      if (dependency?.condition === 'service_completed_successfully') {
        names.add(name);
      }
    }
  }
  return names;
}

/** host_ip of each published port, short ('127.0.0.1:8233:8080', '3000:3000') or long syntax. */
function publishedHostIps(service: Service): Array<string | undefined> {
  return ((service.ports ?? []) as Array<string | number | Record<string, any>>).map((port) => {
    if (typeof port === 'object') {
      return port.host_ip as string | undefined;
    }
    const parts = String(port).split(':');
    return parts.length === 3 ? parts[0] : undefined;
  });
}

/**
 * The compose CLI of this machine, if any: `docker compose` (the v2 plugin) or a `docker-compose`
 * binary of v2 or later. Compose v1 (Debian bookworm's python docker-compose 1.29) reached its end of
 * life in 2023 and does not read the Compose Specification this file is written in (`name`, env_file
 * `required`), so it counts as absent.
 */
function composeCli(): string[] | undefined {
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    const probe = spawnSync(command[0]!, [...command.slice(1), 'version'], { encoding: 'utf8' });
    if (probe.status === 0 && !/version 1\./.test(probe.stdout)) {
      return command;
    }
  }
  return undefined;
}

describe('deployment files', () => {
  it('.env.example lists exactly the settings the service reads, then the compose-only variables', () => {
    const read = settingNames();
    expect(read.length).toBeGreaterThan(20);
    expect(envExampleNames()).toEqual(read);
    expect(composeOnlyNames()).toEqual([
      'AGENTSITE_DB_PASSWORD',
      'DOMAIN',
      'POSTGRES_PASSWORD',
      'TEMPORAL_DB_PASSWORD',
    ]);
  });

  it('docker-compose.yml has the proxy, postgres, Temporal (schema, server, namespace, UI), the API and the worker, wired together', () => {
    const { services, volumes } = compose();
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'postgres',
      'proxy',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'worker',
    ]);
    for (const [name, service] of Object.entries(services)) {
      expect(service.image).toMatch(/^[\w./-]+:[\w.-]+$/);
      expect(service.image).not.toMatch(/:latest$/);
      if (service.build === undefined) {
        expect(service.image).toMatch(/:\d[\w.-]*$/); // pulled images are pinned
      }
      expect(service.restart).toBe(oneShotServices(services).has(name) ? 'on-failure:5' : 'unless-stopped');
      expect(name).toMatch(/^[a-z-]+$/);
    }
    for (const name of ['temporal-ui', 'temporal-namespace']) {
      expect(services[name]!.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    }
    for (const name of ['api', 'worker']) {
      const service = services[name]!;
      expect(service.depends_on.postgres.condition).toBe('service_healthy');
      expect(service.depends_on.temporal.condition).toBe('service_healthy');
      expect(service.depends_on['temporal-namespace'].condition).toBe('service_completed_successfully');
      expect(service.environment.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(service.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
      // Both processes must share the secrets: API tokens, vault entries and payloads cross between them.
      for (const secret of ['JWT_SECRET', 'VAULT_KEY', 'TEMPORAL_CODEC_KEY']) {
        expect(service.environment[secret]).toContain(`\${${secret}:?`);
      }
      const entry = service.command[service.command.length - 1] as string;
      expect(entry).toMatch(/^dist\/src\/(main|worker)\.js$/);
      expect(existsSync(path.join(root, entry))).toBe(true);
    }
    expect(services.postgres!.volumes[0]).toMatch(/^postgres-data:/);
    expect(Object.keys(volumes)).toContain('postgres-data');

    // Every variable compose reads from the environment is a documented setting or compose-only variable.
    const known = new Set([...envExampleNames(), ...composeOnlyNames()]);
    const referenced = COMPOSE_FILES.flatMap((file) => [...read(file).matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]!));
    expect(referenced.filter((name) => !known.has(name))).toEqual([]);
  });

  it('docker-compose.yml: no secret has a default, every password comes from the environment', () => {
    const text = COMPOSE_FILES.map(read).join('\n');
    const uses = [...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)([^}]*)\}/g)].map((m) => ({ name: m[1]!, rest: m[2]! }));
    const secretUses = uses.filter((use) => SECRET_NAME.test(use.name));
    expect(secretUses.map((use) => use.name)).toEqual(
      expect.arrayContaining(['POSTGRES_PASSWORD', 'JWT_SECRET', 'VAULT_KEY', 'TEMPORAL_CODEC_KEY']),
    );
    for (const use of secretUses) {
      // `${NAME:?message}`: compose refuses to start without it; `:-`, `-` or a bare `${NAME}` would not.
      expect(`${use.name}${use.rest}`).toMatch(new RegExp(`^${use.name}:\\?\\S`));
    }
    // No literal secret either: each secret-named variable of each service is an interpolation.
    for (const [name, service] of Object.entries(compose().services)) {
      for (const [key, value] of Object.entries((service.environment ?? {}) as Record<string, unknown>)) {
        if (SECRET_NAME.test(key)) {
          expect({ service: name, key, value: String(value) }).toEqual({
            service: name,
            key,
            value: expect.stringMatching(/\$\{[A-Z_]+:\?/),
          });
        }
      }
    }
  });

  it('docker-compose.yml publishes only the TLS proxy on every interface; the API, Temporal and its UI on 127.0.0.1', () => {
    const { services } = compose();
    const proxy = services.proxy!;
    expect(proxy.image).toMatch(/^caddy:\d+\.\d+\.\d+$/);
    expect(proxy.ports).toEqual(['80:80', '443:443', '443:443/udp']); // HTTP (ACME, redirects), HTTPS, HTTP/3
    for (const [name, service] of Object.entries(services)) {
      if (name !== 'proxy') {
        for (const hostIp of publishedHostIps(service)) {
          expect({ service: name, hostIp }).toEqual({ service: name, hostIp: '127.0.0.1' });
        }
      }
    }
    expect(publishedHostIps(services.api!)).toEqual(['127.0.0.1']);
    expect(publishedHostIps(services.temporal!)).toEqual(['127.0.0.1']);
    expect(publishedHostIps(services['temporal-ui']!)).toEqual(['127.0.0.1']);

    // The proxy serves DOMAIN (a real certificate for a domain, the internal CA's for localhost / an IP)
    // and hands every request to the API.
    expect(proxy.environment.DOMAIN).toBe('${DOMAIN:-localhost}');
    expect(proxy.volumes).toContain('./deploy/caddy/Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = read('deploy/caddy/Caddyfile');
    expect(caddyfile).toMatch(/^\{\$DOMAIN\} \{\n\treverse_proxy api:3000\n\}$/m);
    expect(caddyfile).not.toMatch(/trusted_proxies/); // Caddy replaces whatever X-Forwarded-For a client sends
    expect(caddyfile).toMatch(/^\tadmin off$/m);

    // The API believes X-Forwarded-For from the proxy's fixed address only, on a network of a fixed
    // subnet whose dynamic range (the other containers') leaves that address out.
    const proxyAddress = proxy.networks.edge.ipv4_address as string;
    const [edge] = (compose() as unknown as { networks: Record<string, any> }).networks.edge.ipam.config;
    expect(proxyAddress.startsWith(edge.subnet.replace(/0\/24$/, ''))).toBe(true);
    expect(Number(proxyAddress.split('.')[3])).toBeLessThan(Number(edge.ip_range.split('.')[3].split('/')[0]));
    expect(services.api!.networks).toEqual(['default', 'edge']);
    for (const name of ['api', 'worker']) {
      const environment = services[name]!.environment as Record<string, string | number>;
      expect(environment.TRUST_PROXY).toBe(proxyAddress);
      const problems: string[] = [];
      expect(parseTrustProxy(String(environment.TRUST_PROXY), problems)).toEqual([proxyAddress]);
      expect(problems).toEqual([]);
      // Every interface inside the container (the proxy and Prometheus reach it over the compose network).
      expect(environment.HOST).toBe('0.0.0.0');
    }

    // There, payments are Stripe's or none: the test provider would be refused at start.
    const env = {
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'compose-settings-')),
      // As compose passes them with an empty .env: `${NAME:-default}` is its default.
      ...Object.fromEntries(
        Object.entries(services.api!.environment).map(([name, value]) => [
          name,
          String(value).replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_all, fallback?: string) => fallback ?? ''),
        ]),
      ),
      DATABASE_URL: 'postgres://agentsite:x@postgres:5432/agentsite',
      PUBLIC_BASE_URL: 'https://agents.example.com',
      JWT_SECRET: 'a-jwt-secret-of-at-least-thirty-two-characters',
      VAULT_KEY: `v1:${Buffer.alloc(32, 7).toString('base64')}`,
      TEMPORAL_CODEC_KEY: `p1:${Buffer.alloc(32, 9).toString('base64')}`,
      RUN_HISTORY_RETENTION_DAYS: '30',
      TEMPORAL_NAMESPACE: 'default',
    };
    expect(loadSettings(env)).toMatchObject({ host: '0.0.0.0', paymentProvider: 'none', trustProxy: [proxyAddress] });
    expect(() => loadSettings({ ...env, PAYMENT_PROVIDER: 'test', ALLOW_TEST_PAYMENTS: 'true' })).toThrow(
      SettingsError,
    );
  });

  it('docker-compose.yml: the service and Temporal log in as their own roles, made by deploy/postgres/init-roles.sh', () => {
    const { services } = compose();
    const postgres = services.postgres!;
    // The image's superuser is `postgres` (POSTGRES_USER unset); no other service gets its password.
    expect(postgres.environment.POSTGRES_USER).toBeUndefined();
    expect(postgres.environment).toMatchObject({
      AGENTSITE_DB_PASSWORD: expect.stringMatching(/^\$\{AGENTSITE_DB_PASSWORD:\?/),
      TEMPORAL_DB_PASSWORD: expect.stringMatching(/^\$\{TEMPORAL_DB_PASSWORD:\?/),
    });
    expect(postgres.volumes).toContain('./deploy/postgres/init-roles.sh:/docker-entrypoint-initdb.d/10-roles.sh:ro');
    for (const [name, service] of Object.entries(services)) {
      if (name !== 'postgres') {
        expect({ name, text: JSON.stringify(service) }).not.toEqual({
          name,
          text: expect.stringContaining('POSTGRES_PASSWORD'),
        });
      }
    }
    for (const name of ['api', 'worker']) {
      expect(services[name]!.environment.DATABASE_URL).toBe(
        'postgres://agentsite:${AGENTSITE_DB_PASSWORD:?set AGENTSITE_DB_PASSWORD in .env}@postgres:5432/agentsite',
      );
    }
    expect(services['temporal-schema']!.environment).toMatchObject({
      SQL_USER: 'temporal',
      SQL_PASSWORD: expect.stringMatching(/^\$\{TEMPORAL_DB_PASSWORD:\?/),
    });
    expect(services.temporal!.environment).toMatchObject({
      POSTGRES_USER: 'temporal',
      POSTGRES_PWD: expect.stringMatching(/^\$\{TEMPORAL_DB_PASSWORD:\?/),
    });
    // Temporal's role cannot create databases: the schema job only applies schemas to the ones the script made.
    expect(read('deploy/temporal/setup-schema.sh')).not.toMatch(/temporal-sql-tool .*\bcreate\b/);
  });

  it('deploy/postgres/init-roles.sh, run as the image runs it on a new cluster, makes two non-superusers that can do their work and nothing of the other', async () => {
    // A new cluster, as the image's first start has (the suites' shared one has their roles and databases).
    const dir = mkdtempSync(path.join(tmpdir(), 'init-roles-'));
    chmodSync(dir, 0o755);
    const server = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort(), fast: true });
    const superuser = new URL(server.url);
    const connect = async (user: string, password: string, database: string): Promise<pg.Client> => {
      const client = new pg.Client({ host: '127.0.0.1', port: server.port, user, password, database });
      try {
        await client.connect();
        return client;
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
    };
    const passwords = { AGENTSITE_DB_PASSWORD: 'app-0123456789abcdef', TEMPORAL_DB_PASSWORD: 'tmp-0123456789abcdef' };
    try {
      const admin = await connect('postgres', decodeURIComponent(superuser.password), 'postgres');
      await admin.query('DROP DATABASE agentsite'); // the embedded server's own: the image's cluster has none
      await admin.end();

      // As docker-entrypoint.sh runs it: sh, psql on PATH, the image's POSTGRES_* and the container's environment.
      const run = spawnSync('sh', [path.join(root, 'deploy/postgres/init-roles.sh')], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          PGHOST: '127.0.0.1',
          PGPORT: String(server.port),
          PGPASSWORD: decodeURIComponent(superuser.password),
          POSTGRES_USER: 'postgres',
          POSTGRES_DB: 'postgres',
          ...passwords,
        },
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(`${run.stdout}${run.stderr}`).not.toContain(passwords.AGENTSITE_DB_PASSWORD);

      const check = await connect('postgres', decodeURIComponent(superuser.password), 'postgres');
      const roles = await check.query(
        `SELECT rolname, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, rolcanlogin
         FROM pg_roles WHERE rolname IN ('agentsite', 'temporal') ORDER BY rolname`,
      );
      const limited = {
        rolsuper: false,
        rolcreatedb: false,
        rolcreaterole: false,
        rolreplication: false,
        rolbypassrls: false,
        rolcanlogin: true,
      };
      expect(roles.rows).toEqual([
        { rolname: 'agentsite', ...limited },
        { rolname: 'temporal', ...limited },
      ]);
      const owners = await check.query(
        `SELECT datname, pg_get_userbyid(datdba) AS owner FROM pg_database
         WHERE datname IN ('agentsite', 'temporal', 'temporal_visibility') ORDER BY datname`,
      );
      expect(owners.rows).toEqual([
        { datname: 'agentsite', owner: 'agentsite' },
        { datname: 'temporal', owner: 'temporal' },
        { datname: 'temporal_visibility', owner: 'temporal' },
      ]);
      await check.end();

      // The service's migrations run as its role, on its database.
      const settings = loadSettings({
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'init-roles-settings-')),
        DATABASE_URL: `postgres://agentsite:${passwords.AGENTSITE_DB_PASSWORD}@127.0.0.1:${server.port}/agentsite`,
      });
      const dataSource = await openDataSource(settings);
      try {
        expect((await runMigrations(dataSource)).length).toBeGreaterThan(5);
        expect(await runMigrations(dataSource)).toEqual([]);
        const [{ owner }] = (await dataSource.query(
          `SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname = 'users'`,
        )) as Array<{ owner: string }>;
        expect(owner).toBe('agentsite');
      } finally {
        await dataSource.destroy();
      }

      // Temporal's role makes its schema in both of its databases.
      for (const database of ['temporal', 'temporal_visibility']) {
        const temporal = await connect('temporal', passwords.TEMPORAL_DB_PASSWORD, database);
        await temporal.query('CREATE TABLE schema_version (version_partition INT PRIMARY KEY)');
        await temporal.query('CREATE INDEX ON schema_version (version_partition)');
        await temporal.end();
      }

      // Neither reaches the other's databases, nor creates a database or a role.
      for (const [user, password, database] of [
        ['agentsite', passwords.AGENTSITE_DB_PASSWORD, 'temporal'],
        ['agentsite', passwords.AGENTSITE_DB_PASSWORD, 'temporal_visibility'],
        ['temporal', passwords.TEMPORAL_DB_PASSWORD, 'agentsite'],
      ] as const) {
        await expect(connect(user, password, database)).rejects.toMatchObject({ code: '42501' });
      }
      const app = await connect('agentsite', passwords.AGENTSITE_DB_PASSWORD, 'agentsite');
      await expect(app.query('CREATE DATABASE other')).rejects.toMatchObject({ code: '42501' });
      await expect(app.query('CREATE ROLE other')).rejects.toMatchObject({ code: '42501' });
      await expect(app.query('ALTER ROLE agentsite SUPERUSER')).rejects.toMatchObject({ code: '42501' });
      await app.end();
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('docker-compose.yml healthchecks every long-running service, the worker included', () => {
    const { services } = compose();
    const oneShot = oneShotServices(services);
    expect([...oneShot].sort()).toEqual(['temporal-namespace', 'temporal-schema']);
    const longRunning = Object.keys(services).filter((name) => !oneShot.has(name));
    expect(longRunning.sort()).toEqual(['api', 'postgres', 'proxy', 'temporal', 'temporal-ui', 'worker']);
    for (const name of longRunning) {
      const healthcheck = services[name]!.healthcheck as { test?: string[]; disable?: boolean } | undefined;
      expect({ name, test: healthcheck?.test?.[0] }).toEqual({ name, test: expect.stringMatching(/^CMD(-SHELL)?$/) });
      expect(healthcheck?.disable).not.toBe(true);
    }
    // The worker's check is its own /health/ready, on the port its server listens on (WORKER_HTTP_PORT),
    // which asks Temporal whether this very worker polls (see health.e2e-spec); the API's is /api/health.
    const workerPort = services.worker!.environment.WORKER_HTTP_PORT as number;
    expect(workerPort).toBeGreaterThan(0);
    expect(services.worker!.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${workerPort}/health/ready`);
    expect(services.worker!.healthcheck.test.join(' ')).toContain('process.exit(r.ok?0:1)');
    expect(services.api!.healthcheck.test.join(' ')).toContain('http://127.0.0.1:3000/api/health');
    // No worker port is published: Prometheus scrapes it on the compose network.
    expect(services.worker!.ports).toBeUndefined();
  });

  it('docker-compose.yml: the API and the worker run one image; Temporal from its current images, set up by its admin tools', () => {
    const { services } = compose();
    const { api, worker } = services as Record<string, Service>;
    expect(worker!.build).toEqual(api!.build);
    expect(worker!.image).toBe(api!.image);
    expect(api!.build).toBe('.');
    expect(worker!.command).not.toEqual(api!.command);
    const temporalImages = Object.values(services)
      .map((service) => service.image as string)
      .filter((image) => image.startsWith('temporalio/'));
    for (const image of temporalImages) {
      expect(image).toMatch(/^temporalio\/(server|admin-tools|ui):\d[\w.-]*$/);
      expect(image).not.toContain('auto-setup');
    }
    expect(services.temporal!.image).toMatch(/^temporalio\/server:/);
    // Server and admin tools of one release: the schema applied is the one the server expects.
    expect(services['temporal-schema']!.image).toBe(services.temporal!.image.replace('/server:', '/admin-tools:'));
    expect(services['temporal-schema']!.entrypoint.join(' ')).toContain('setup-schema.sh');
    expect(read('deploy/temporal/setup-schema.sh')).toMatch(/temporal-sql-tool .*update-schema/);
    expect(services.temporal!.depends_on['temporal-schema'].condition).toBe('service_completed_successfully');
    // The namespace with the service's retention, the UI decoding through the API's codec endpoint.
    expect(services['temporal-namespace']!.environment.RETENTION_DAYS).toBe('${RUN_HISTORY_RETENTION_DAYS:-30}');
    expect(services['temporal-ui']!.environment.TEMPORAL_CODEC_INCLUDE_CREDENTIALS).toBe('true');
    expect(services['temporal-ui']!.environment.TEMPORAL_CODEC_ENDPOINT).toMatch(
      /^\$\{PUBLIC_BASE_URL:\?[^}]+\}\/api\/temporal-codec$/,
    );
  });

  it("compose's Temporal server has the dev server's dynamic config; the bench's cluster runs compose's release", () => {
    const dynamic = YAML.parse(read('deploy/temporal/dynamicconfig/agentsite.yaml')) as Record<string, unknown>;
    expect(Object.keys(DEV_SERVER_DYNAMIC_CONFIG)).toEqual(
      expect.arrayContaining(['worker.perNamespaceWorkerOptions', 'worker.schedulerNamespaceStartWorkflowRPS']),
    );
    for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG)) {
      expect(dynamic[key]).toEqual([{ value, constraints: {} }]);
    }
    const { services } = compose();
    expect((services as Record<string, Service>).temporal!.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
  });

  it('docker compose config accepts docker-compose.yml with the secrets set, and refuses it without the password', () => {
    const cli = composeCli();
    if (cli === undefined) {
      // The one check that needs the compose CLI (v2 or later); every rule above holds without it.
      console.warn('no compose v2 CLI here (docker compose / docker-compose): `docker compose config` not run');
      return;
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'compose-env-'));
    const sample: Record<string, string> = {
      POSTGRES_PASSWORD: '0123456789abcdef0123456789abcdef',
      AGENTSITE_DB_PASSWORD: 'aaaa456789abcdef0123456789abcdef',
      TEMPORAL_DB_PASSWORD: 'bbbb456789abcdef0123456789abcdef',
      JWT_SECRET: 'a-jwt-secret-of-at-least-thirty-two-characters',
      VAULT_KEY: `v1:${Buffer.alloc(32, 7).toString('base64')}`,
      TEMPORAL_CODEC_KEY: `p1:${Buffer.alloc(32, 9).toString('base64')}`,
      PUBLIC_BASE_URL: 'https://agents.example.com',
    };
    let files = 0;
    const run = (env: Record<string, string>, extraFiles: string[] = []) => {
      const envFile = path.join(dir, `${(files += 1)}.env`);
      writeFileSync(
        envFile,
        Object.entries(env)
          .map(([name, value]) => `${name}=${value}\n`)
          .join(''),
      );
      const args = [...cli.slice(1), '--env-file', envFile, '-f', 'docker-compose.yml', ...extraFiles, 'config'];
      return spawnSync(cli[0]!, args, {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        encoding: 'utf8',
      });
    };
    const accepted = run(sample);
    expect(accepted.stderr).not.toMatch(/error/i);
    expect(accepted.status).toBe(0);
    const resolved = YAML.parse(accepted.stdout) as Compose;
    expect(resolved.services.api!.environment.DATABASE_URL).toBe(
      'postgres://agentsite:aaaa456789abcdef0123456789abcdef@postgres:5432/agentsite',
    );
    expect(resolved.services.temporal!.environment.POSTGRES_PWD).toBe(sample.TEMPORAL_DB_PASSWORD);
    // Published: the proxy on every interface (no host_ip), everything else on 127.0.0.1 only.
    for (const [name, service] of Object.entries(resolved.services)) {
      for (const port of (service.ports ?? []) as Array<{ host_ip?: string; published: string }>) {
        expect({ name, published: port.published, hostIp: port.host_ip }).toEqual(
          name === 'proxy'
            ? { name, published: expect.stringMatching(/^(80|443)$/), hostIp: undefined }
            : { name, published: port.published, hostIp: '127.0.0.1' },
        );
      }
    }
    expect(resolved.services.proxy!.environment.DOMAIN).toBe('localhost');
    expect(resolved.services['temporal-ui']!.environment.TEMPORAL_CODEC_ENDPOINT).toBe(
      'https://agents.example.com/api/temporal-codec',
    );
    expect(resolved.services['temporal-namespace']!.environment.RETENTION_DAYS).toBe('30');

    // With the Temporal Cloud override: the API and worker wait for PostgreSQL only, and reach the
    // cluster .env names.
    const cloud = run({ ...sample, TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct' }, [
      '-f',
      'docker-compose.temporal-cloud.yml',
    ]);
    expect(cloud.stderr).not.toMatch(/error/i);
    expect(cloud.status).toBe(0);
    const merged = YAML.parse(cloud.stdout) as Compose;
    for (const name of ['api', 'worker']) {
      expect(Object.keys(merged.services[name]!.depends_on)).toEqual(['postgres']);
      expect(merged.services[name]!.environment).toMatchObject({
        TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
        TEMPORAL_NAMESPACE: 'ns.acct',
        VAULT_KEY: sample.VAULT_KEY,
      });
    }
    const noAddress = run({ ...sample, TEMPORAL_NAMESPACE: 'ns.acct' }, ['-f', 'docker-compose.temporal-cloud.yml']);
    expect(noAddress.status).not.toBe(0);
    expect(noAddress.stderr).toContain('required variable TEMPORAL_ADDRESS is missing');

    for (const name of ['POSTGRES_PASSWORD', 'AGENTSITE_DB_PASSWORD', 'TEMPORAL_DB_PASSWORD']) {
      const refused = run(Object.fromEntries(Object.entries(sample).filter(([key]) => key !== name)));
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain(name);
    }
  });

  it('deploy/temporal/create-namespace.sh creates the namespace with the retention, and sets it again at the next run', async () => {
    const namespace = `compose-${Date.now()}`;
    const run = (retentionDays: string) =>
      spawnSync('sh', [path.join(root, 'deploy/temporal/create-namespace.sh')], {
        // As in the admin-tools image: the temporal CLI on PATH, the server's address in the environment.
        env: {
          PATH: `${path.dirname(testEnv('temporalCli'))}${path.delimiter}${process.env.PATH}`,
          HOME: process.env.HOME,
          MAX_ATTEMPTS: '15',
          TEMPORAL_ADDRESS: testEnv('temporalAddress'),
          NAMESPACE: namespace,
          RETENTION_DAYS: retentionDays,
        },
        encoding: 'utf8',
      });
    const connection = await Connection.connect({ address: testEnv('temporalAddress') });
    const retentionDays = async (): Promise<number> => {
      const described = await connection.workflowService.describeNamespace({ namespace });
      return Number(described.config?.workflowExecutionRetentionTtl?.seconds) / 86_400;
    };
    try {
      const created = run('3');
      expect(created.stdout).toContain(`namespace ${namespace} created, retention 3d`);
      expect(created.status).toBe(0);
      expect(await retentionDays()).toBe(3);

      const updated = run('9');
      expect(updated.stdout).toContain(`namespace ${namespace}: retention 9d`);
      expect(updated.status).toBe(0);
      expect(await retentionDays()).toBe(9);

      for (const wrong of ['0', 'seven', '']) {
        const refused = run(wrong);
        expect(refused.status).toBe(2);
        expect(refused.stderr).toContain('RUN_HISTORY_RETENTION_DAYS must be a whole number of days');
      }
      expect(await retentionDays()).toBe(9);
    } finally {
      await connection.close();
    }
  });

  it('the Dockerfile copies only what exists and builds with the project scripts', () => {
    const dockerfile = read('Dockerfile');
    const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copies.length).toBeGreaterThan(5);
    for (const source of copies) {
      expect(existsSync(path.join(root, source))).toBe(true);
    }
    expect(dockerfile).toContain('RUN npm ci');
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toMatch(/^USER node$/m);
    // A current Node LTS in both stages (the engines field allows it).
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
    expect(bases).toHaveLength(2);
    for (const base of bases) {
      expect(base).toMatch(/^node:(22|24)\.\d+\.\d+-bookworm-slim$/);
    }
  });

  it('.dockerignore keeps secrets, local data and build output out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['.env', '.data', 'node_modules', 'dist', '.git']) {
      expect(ignored).toContain(entry);
    }
    // Nothing the Dockerfile copies is ignored.
    const copies = [...read('Dockerfile').matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    for (const source of copies) {
      expect(ignored).not.toContain(source);
    }
  });

  it('the image carries the operator commands: `node dist/scripts/admin.js` runs in it as `npm run admin` does', () => {
    const dockerfile = read('Dockerfile');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtimeStage).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.admin).toMatch(/&& node dist\/scripts\/admin\.js"?$/);
    expect(existsSync(path.join(root, 'dist/scripts/admin.js'))).toBe(true);
  });

  it('.ci/run runs the README test command', () => {
    const ci = read('.ci/run');
    const readme = read('README.md');
    expect(ci).toMatch(/^npm ci$/m);
    expect(ci).toMatch(/^npm test$/m);
    expect(readme).toContain('npm ci && npm test');
    expect(readme).toContain('npm ci && npm start');
  });
});
