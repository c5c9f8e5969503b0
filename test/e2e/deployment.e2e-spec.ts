import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import { loadSettings } from '../../src/config/settings.js';

const root = process.cwd();
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/** Every variable loadSettings reads, found by watching it read an empty environment. */
function settingNames(): string[] {
  const names = new Set<string>();
  const env = new Proxy(
    { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'names-')) } as Record<string, string | undefined>,
    {
      get(target, name) {
        if (typeof name === 'string') {
          names.add(name);
        }
        return target[name as string];
      },
    },
  );
  loadSettings(env);
  return [...names].sort();
}

function envExampleNames(): string[] {
  return read('.env.example')
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
}

describe('deployment files', () => {
  it('.env.example lists exactly the settings the service reads', () => {
    const read = settingNames();
    expect(read.length).toBeGreaterThan(20);
    expect(envExampleNames()).toEqual(read);
  });

  it('docker-compose.yml has postgres, Temporal with its UI, the API and the worker, wired together', () => {
    const compose = YAML.parse(read('docker-compose.yml')) as {
      services: Record<string, Record<string, any>>;
      volumes: Record<string, unknown>;
    };
    const services = compose.services;
    expect(Object.keys(services).sort()).toEqual(['api', 'postgres', 'temporal', 'temporal-ui', 'worker']);
    for (const [name, service] of Object.entries(services)) {
      if (service.image !== undefined) {
        expect(service.image).toMatch(/^[\w./-]+:\d[\w.-]*$/); // pinned, never :latest
      } else {
        expect(service.build).toBe('.');
      }
      expect(service.restart).toBe('unless-stopped');
      expect(name).toMatch(/^[a-z-]+$/);
    }
    expect(services['temporal-ui']!.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    for (const name of ['api', 'worker']) {
      const service = services[name]!;
      expect(service.depends_on.postgres.condition).toBe('service_healthy');
      expect(service.depends_on.temporal.condition).toBe('service_healthy');
      expect(service.environment.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(service.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
      // Both processes must share the secrets: API tokens and vault entries cross between them.
      expect(service.environment.JWT_SECRET).toContain('JWT_SECRET');
      expect(service.environment.VAULT_KEY).toContain('VAULT_KEY');
      const entry = service.command[service.command.length - 1] as string;
      expect(entry).toMatch(/^dist\/src\/(main|worker)\.js$/);
      expect(existsSync(path.join(root, entry))).toBe(true);
    }
    expect(services.postgres!.volumes[0]).toMatch(/^postgres-data:/);
    expect(Object.keys(compose.volumes)).toContain('postgres-data');

    // Every variable compose reads from the environment is a documented setting (or the database password).
    const known = new Set([...envExampleNames(), 'POSTGRES_PASSWORD']);
    const referenced = [...read('docker-compose.yml').matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]!);
    expect(referenced.filter((name) => !known.has(name))).toEqual([]);
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
