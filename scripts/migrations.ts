/**
 * `npm run migration:run`: applies pending migrations to DATABASE_URL (or the embedded database,
 * which must be running: `npm start` in another terminal).
 * `npm run migration:generate -- <Name>`: writes a migration with the SQL that brings the database
 * to the entities' shape, into src/database/migrations (then list it in MIGRATIONS).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSettings } from '../src/config/settings.js';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { ENTITIES } from '../src/entities.js';

const USAGE = `usage: npm run migration:run               apply the pending migrations
       npm run migration:generate -- <Name>  write one that brings the database to the entities' shape`;

async function main(): Promise<void> {
  const [command, name] = process.argv.slice(2);
  if (command === '--help' || command === '-h') {
    console.log(USAGE);
    return;
  }
  const settings = loadSettings();
  // Every entity: `generate` compares the schema with them (running migrations alone needs none).
  const dataSource = await openDataSource(settings, ENTITIES);
  try {
    if (command === 'run') {
      const applied = await runMigrations(dataSource);
      console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'nothing to apply');
      return;
    }
    if (command === 'generate') {
      if (!name || !/^[A-Z][A-Za-z0-9]+$/.test(name)) {
        throw new Error('usage: npm run migration:generate -- <PascalCaseName>');
      }
      await runMigrations(dataSource);
      const sql = await dataSource.driver.createSchemaBuilder().log();
      if (sql.upQueries.length === 0) {
        console.log('the database already matches the entities; no migration written');
        return;
      }
      const stamp = Date.now();
      const quote = (q: string): string => `    await q.query(${JSON.stringify(q)});`;
      const file = path.resolve(
        'src/database/migrations',
        `${stamp}-${name.replace(/[A-Z]/g, (c, i: number) => (i ? '-' : '') + c.toLowerCase())}.ts`,
      );
      writeFileSync(
        file,
        [
          "import { type MigrationInterface, type QueryRunner } from 'typeorm';",
          '',
          `export class ${name}${stamp} implements MigrationInterface {`,
          `  name = '${name}${stamp}';`,
          '',
          '  async up(q: QueryRunner): Promise<void> {',
          ...sql.upQueries.map((query) => quote(query.query)),
          '  }',
          '',
          '  async down(q: QueryRunner): Promise<void> {',
          ...sql.downQueries.reverse().map((query) => quote(query.query)),
          '  }',
          '}',
          '',
        ].join('\n'),
      );
      console.log(`wrote ${path.relative(process.cwd(), file)}; add it to MIGRATIONS in src/database/data-source.ts`);
      return;
    }
    throw new Error('usage: migrations.js run | generate <Name>');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
