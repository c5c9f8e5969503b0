import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { getMetadataArgsStorage } from 'typeorm';
import { AppModule } from './app.module.js';
import { SETTINGS, SettingsModule } from './config/settings.module.js';
import { ENTITIES } from './entities.js';
import { WorkerModule } from './worker.module.js';

type ModuleEntry = { module?: unknown; providers?: unknown[]; imports?: unknown[] } | (abstract new () => unknown);

interface FoundModule {
  name: string;
  providers: unknown[];
  controllers: unknown[];
  /** Entities of the `TypeOrmModule.forFeature` lists it imports. */
  entities: unknown[];
}

/** Every module of a tree, found through static and dynamic imports as Nest does (each once). */
function modulesOf(root: ModuleEntry): FoundModule[] {
  const seen = new Set<unknown>();
  const found: FoundModule[] = [];
  const visit = (entry: ModuleEntry): void => {
    const dynamic = typeof entry === 'function' ? undefined : entry;
    const module = dynamic?.module ?? entry;
    const key = dynamic ?? module;
    if (typeof module !== 'function' || seen.has(key)) {
      return;
    }
    seen.add(key);
    const imports = [
      ...((Reflect.getMetadata('imports', module) ?? []) as ModuleEntry[]),
      ...((dynamic?.imports ?? []) as ModuleEntry[]),
    ];
    const entities = imports
      .filter((i): i is { module: unknown; providers: unknown[] } => typeof i === 'object' && i.module !== undefined)
      .filter((i) => (i.module as { name?: string }).name === 'TypeOrmModule')
      .flatMap((i) => (i.providers ?? []) as Array<{ targetEntitySchema?: { target: unknown } }>)
      .map((p) => p.targetEntitySchema?.target)
      .filter((t) => t !== undefined);
    found.push({
      name: (module as { name: string }).name,
      providers: [...((Reflect.getMetadata('providers', module) ?? []) as unknown[]), ...(dynamic?.providers ?? [])],
      controllers: (Reflect.getMetadata('controllers', module) ?? []) as unknown[],
      entities,
    });
    imports.forEach(visit);
  };
  visit(root);
  return found;
}

/** The provider classes (or, for a factory or value, its token) a module lists. */
function providerKeys(module: FoundModule): unknown[] {
  return module.providers.map((p) => {
    const custom = p as { provide: unknown; useClass?: unknown };
    return typeof p === 'function' ? p : (custom.useClass ?? custom.provide);
  });
}

/** Every entity class declared in a `*.entity.ts` / `*.entities.ts` file under src/ (the compiled file beside this spec). */
async function entityClassesInSource(): Promise<unknown[]> {
  const compiledSrc = path.dirname(fileURLToPath(import.meta.url));
  const sourceSrc = path.resolve(compiledSrc, '../../src');
  const files = (readdirSync(sourceSrc, { recursive: true }) as string[]).filter((f) => /\.entit(y|ies)\.ts$/.test(f));
  const tables = new Set(getMetadataArgsStorage().tables.map((t) => t.target));
  const classes: unknown[] = [];
  for (const file of files) {
    const exported = (await import(pathToFileURL(path.join(compiledSrc, file.replace(/\.ts$/, '.js'))).href)) as Record<
      string,
      unknown
    >;
    classes.push(...Object.values(exported).filter((value) => tables.has(value as never)));
  }
  return classes;
}

describe('module map', () => {
  const app = modulesOf(AppModule.forRoot({} as never));
  const worker = modulesOf(WorkerModule.forRoot({} as never));

  it('no provider is listed in the providers of two modules (API and worker trees)', () => {
    for (const tree of [app, worker]) {
      const owners = new Map<unknown, string[]>();
      for (const module of tree.filter((m) => m.name !== 'TypeOrmModule')) {
        for (const key of providerKeys(module)) {
          owners.set(key, [...(owners.get(key) ?? []), module.name]);
        }
      }
      const shared = [...owners].filter(([, names]) => names.length > 1).map(([key, names]) => [String(key), names]);
      expect(shared).toEqual([]);
    }
  });

  it('each entity is registered by exactly one feature module, and the API loads every entity', async () => {
    const registrations = app.flatMap((m) => m.entities.map((entity) => ({ entity, module: m.name })));
    const byEntity = new Map<unknown, string[]>();
    for (const { entity, module } of registrations) {
      byEntity.set(entity, [...(byEntity.get(entity) ?? []), module]);
    }
    expect([...byEntity.values()].filter((modules) => modules.length > 1)).toEqual([]);
    const inSource = await entityClassesInSource();
    expect(inSource.length).toBeGreaterThanOrEqual(11);
    expect(new Set(byEntity.keys())).toEqual(new Set(inSource));
    // The scripts' list (migration:generate) is the same set.
    expect(new Set(ENTITIES)).toEqual(new Set(inSource));
  });

  it('the worker loads no HTTP-only module and no *-core module exists', () => {
    const names = worker.map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining(['RunsModule', 'ModelModule', 'ToolsModule', 'OAuthClientModule', 'VaultModule']),
    );
    for (const httpOnly of ['OAuthModule', 'ChatModule', 'AuthModule']) {
      expect(names).not.toContain(httpOnly);
    }
    expect([...app, ...worker].filter((m) => /Core/.test(m.name) && m.name !== 'TypeOrmCoreModule')).toEqual([]);
  });

  it('Nest injects the settings object the entry point loaded, not a second parse', async () => {
    const loaded = { port: 1234 } as never;
    const context = await NestFactory.createApplicationContext(SettingsModule.forRoot(loaded), { logger: false });
    try {
      expect(context.get(SETTINGS)).toBe(loaded);
    } finally {
      await context.close();
    }
  });
});
