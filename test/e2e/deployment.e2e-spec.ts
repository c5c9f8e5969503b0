import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Connection } from '@temporalio/client';
import YAML from 'yaml';
import { loadSettings, PAYMENT_PROVIDERS } from '../../src/config/settings.js';
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
    expect(composeOnlyNames()).toEqual(['POSTGRES_PASSWORD']);
  });

  it('docker-compose.yml has postgres, Temporal (schema, server, namespace, UI), the API and the worker, wired together', () => {
    const { services, volumes } = compose();
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'postgres',
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

  it('docker-compose.yml publishes only the API; Temporal and its UI at most on 127.0.0.1', () => {
    const { services } = compose();
    expect(publishedHostIps(services.api!)).toEqual([undefined]); // the API, on every interface
    for (const [name, service] of Object.entries(services)) {
      if (name !== 'api') {
        for (const hostIp of publishedHostIps(service)) {
          expect({ service: name, hostIp }).toEqual({ service: name, hostIp: '127.0.0.1' });
        }
      }
    }
    expect(publishedHostIps(services.temporal!)).toEqual(['127.0.0.1']);
    expect(publishedHostIps(services['temporal-ui']!)).toEqual(['127.0.0.1']);
  });

  it('docker-compose.yml healthchecks every long-running service, the worker included', () => {
    const { services } = compose();
    const oneShot = oneShotServices(services);
    expect([...oneShot].sort()).toEqual(['temporal-namespace', 'temporal-schema']);
    const longRunning = Object.keys(services).filter((name) => !oneShot.has(name));
    expect(longRunning.sort()).toEqual(['api', 'postgres', 'temporal', 'temporal-ui', 'worker']);
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
      'postgres://agentsite:0123456789abcdef0123456789abcdef@postgres:5432/agentsite',
    );
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

    const { POSTGRES_PASSWORD: _password, ...withoutPassword } = sample;
    const refused = run(withoutPassword);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('POSTGRES_PASSWORD');
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
    expect(scripts.admin).toMatch(/&& node dist\/scripts\/admin\.js$/);
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
