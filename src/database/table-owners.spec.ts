import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { SQL_FUNCTIONS, TABLE_OWNERS } from './table-owners.js';

/** The source tree (this spec runs compiled, from dist/src/database/). */
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');
const MIGRATIONS = path.join(SRC, 'database', 'migrations');

const read = (file: string): string => readFileSync(file, 'utf8');

/** `up()`'s text of a migration file (from `async up(` to `async down(`). */
function upOf(text: string): string {
  const start = text.indexOf('async up(');
  const end = text.indexOf('async down(', start);
  return start < 0 ? '' : text.slice(start, end < 0 ? undefined : end);
}

/** Tables and functions the migrations leave, applied in order (a file's drops after its creations). */
function schemaOfMigrations(): { tables: Set<string>; functions: Set<string> } {
  const tables = new Set<string>();
  const functions = new Set<string>();
  for (const file of readdirSync(MIGRATIONS)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const text = read(path.join(MIGRATIONS, file));
    for (const [, name] of text.matchAll(/CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?(\w+)/g)) {
      tables.add(name!);
    }
    // Function texts may sit in constants (for down() as well): every one named counts as created,
    // and a drop in up() removes it.
    for (const [, name] of text.matchAll(/CREATE (?:OR REPLACE )?FUNCTION (\w+)/g)) {
      functions.add(name!);
    }
    const up = upOf(text);
    for (const [, name] of up.matchAll(/DROP TABLE (?:IF EXISTS )?(\w+)/g)) {
      tables.delete(name!);
    }
    for (const [, name] of up.matchAll(/DROP FUNCTION (?:IF EXISTS )?(\w+)/g)) {
      functions.delete(name!);
    }
  }
  return { tables, functions };
}

/** Every non-spec source file under src/ but the migrations, relative to src/. */
function sourceFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !/\.(e2e-)?spec\.ts$/.test(f))
    .filter((f) => !f.startsWith(`database${path.sep}migrations${path.sep}`));
}

const featureOf = (file: string): string => (file.includes(path.sep) ? file.split(path.sep)[0]! : '(root)');

/** Entity class name → its table, from the `@Entity({ name })` decorators. */
function entityTables(files: string[]): Map<string, string> {
  const tables = new Map<string, string>();
  for (const file of files.filter((f) => /\.entit(y|ies)\.ts$/.test(f))) {
    for (const [, table, cls] of read(path.join(SRC, file)).matchAll(
      /@Entity\(\{ name: '(\w+)' \}\)\s*export class (\w+)/g,
    )) {
      tables.set(cls!, table!);
    }
  }
  return tables;
}

const WRITE = 'save|insert|update|delete|upsert|increment|decrement|remove|softDelete|softRemove|restore|clear';

/** The tables a source file writes, as far as its text tells: raw SQL and TypeORM calls on entity repositories. */
function writesOf(
  text: string,
  entities: Map<string, string>,
  options: { dynamic: boolean } = { dynamic: false },
): Array<{ table: string; how: string }> {
  const writes: Array<{ table: string; how: string }> = [];
  // With `dynamic`, a table named by a template (`UPDATE ${table} SET`) counts too, as `${…}`.
  const name = options.dynamic ? '(\\w+|\\$\\{\\w+\\})' : '(\\w+)';
  const sql = [
    new RegExp(`\\bINSERT INTO ${name}`, 'g'),
    new RegExp(`\\bDELETE FROM ${name}`, 'g'),
    // `UPDATE t SET` / `UPDATE t c SET` / `UPDATE t AS c SET`, not `DO UPDATE SET` nor `FOR UPDATE`.
    new RegExp(`\\bUPDATE ${name}\\s+(?:AS\\s+)?(?:\\w+\\s+)?SET\\b`, 'g'),
  ];
  for (const pattern of sql) {
    for (const [match, table] of text.matchAll(pattern)) {
      if (table !== 'SET') {
        writes.push({ table: table!, how: match.replace(/\s+/g, ' ') });
      }
    }
  }
  const tableOf = (entity: string): string | undefined => entities.get(entity);
  // A repository handle written through at once: getRepository(X).update(…), or a query builder into X.
  for (const [match, entity] of text.matchAll(new RegExp(`getRepository\\((\\w+)\\)\\s*\\.\\s*(?:${WRITE})\\(`, 'g'))) {
    writes.push({ table: tableOf(entity!) ?? entity!, how: match });
  }
  for (const [match, entity] of text.matchAll(/\.(?:into|update)\((\w+Entity)\b/g)) {
    writes.push({ table: tableOf(entity!) ?? entity!, how: match });
  }
  // A handle kept in a name (a const, a getter, an injected repository), then written through.
  const handles = [
    /(?:const|let)\s+(\w+)\s*=\s*[\w.?()]*getRepository\((\w+)\)/g,
    /get\s+(\w+)\(\)[^{]*\{\s*return\s+[\w.?()]*getRepository\((\w+)\)/g,
    /@InjectRepository\((\w+)\)\s*(?:private|protected|public)?\s*(?:readonly\s+)?(\w+)/g,
  ];
  for (const [index, pattern] of handles.entries()) {
    for (const found of text.matchAll(pattern)) {
      const [name, entity] = index === 2 ? [found[2]!, found[1]!] : [found[1]!, found[2]!];
      const use = new RegExp(`\\b${name}\\.(?:${WRITE})\\(`);
      const hit = use.exec(text);
      if (hit !== null) {
        writes.push({ table: tableOf(entity) ?? entity, how: `${found[0].replace(/\s+/g, ' ')} … ${hit[0]}` });
      }
    }
  }
  return writes;
}

describe('table owners', () => {
  const files = sourceFiles();

  it('every table the migrations leave has one owner, a feature folder of src/, and the map names no other', () => {
    const { tables } = schemaOfMigrations();
    expect([...tables].sort()).toEqual(Object.keys(TABLE_OWNERS).sort());
    const features = new Set(
      readdirSync(SRC, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name),
    );
    for (const [table, owner] of Object.entries(TABLE_OWNERS)) {
      expect([table, features.has(owner)]).toEqual([table, true]);
    }
  });

  it("an entity lives in its table owner's folder", () => {
    const entities = entityTables(files);
    expect(entities.size).toBeGreaterThan(10);
    for (const file of files.filter((f) => /\.entit(y|ies)\.ts$/.test(f))) {
      for (const [cls, table] of entities) {
        if (new RegExp(`export class ${cls}\\b`).test(read(path.join(SRC, file)))) {
          expect([cls, featureOf(file)]).toEqual([cls, TABLE_OWNERS[table]]);
        }
      }
    }
  });

  it("only a table's owner writes it: no INSERT, UPDATE, DELETE or TypeORM write on another feature's table", () => {
    const entities = entityTables(files);
    const foreign: string[] = [];
    let seen = 0;
    for (const file of files) {
      for (const { table, how } of writesOf(read(path.join(SRC, file)), entities)) {
        seen += 1;
        const owner = TABLE_OWNERS[table];
        if (owner !== featureOf(file)) {
          foreign.push(`${file} writes ${table} (owner: ${owner ?? 'none: not a table of the map'}): ${how}`);
        }
      }
    }
    // The scan finds the writes there are (a regex that matched nothing would pass vacuously).
    expect(seen).toBeGreaterThan(40);
    expect(foreign).toEqual([]);
  });

  it("scripts write no table themselves: they call the owners' repositories (vault:rotate)", () => {
    const scripts = path.resolve(SRC, '../scripts');
    const entities = entityTables(files);
    const writes = (readdirSync(scripts, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !/\.(e2e-)?spec\.ts$/.test(f))
      .flatMap((f) => writesOf(read(path.join(scripts, f)), entities, { dynamic: true }).map((w) => `${f}: ${w.how}`));
    expect(writes).toEqual([]);
  });

  it('the scan sees the kinds of write it checks for', () => {
    const entities = new Map([['UserEntity', 'users']]);
    const tables = (text: string): string[] => writesOf(text, entities).map((w) => w.table);
    expect(tables("em.query('UPDATE users SET credits = $2 WHERE id = $1')")).toEqual(['users']);
    expect(tables('`UPDATE site_credentials c\n SET status = 1`')).toEqual(['site_credentials']);
    expect(tables("'INSERT INTO credit_ledger (a) VALUES ($1) ON CONFLICT (a) DO UPDATE SET a = 1'")).toEqual([
      'credit_ledger',
    ]);
    expect(tables("'SELECT credits FROM users WHERE id = $1 FOR UPDATE'")).toEqual([]);
    expect(writesOf('`UPDATE ${table} SET key_id = $1`', entities, { dynamic: true }).map((w) => w.table)).toEqual([
      '${table}',
    ]);
    expect(tables('await em.getRepository(UserEntity).update({ id }, { tier });')).toEqual(['users']);
    expect(
      tables(
        'private get users() {\n return this.dataSource.getRepository(UserEntity);\n }\n this.users.update(a, b);',
      ),
    ).toEqual(['users']);
    expect(tables('this.dataSource.getRepository(UserEntity).findOneBy({ id })')).toEqual([]);
  });

  it('no business rule lives in PL/pgSQL: the functions the migrations leave are the cache triggers', () => {
    const { functions } = schemaOfMigrations();
    expect([...functions].sort()).toEqual(Object.keys(SQL_FUNCTIONS).sort());
  });
});
