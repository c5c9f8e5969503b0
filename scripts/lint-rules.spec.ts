import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';

/** The repository root (this spec runs as dist/scripts/lint-rules.spec.js). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type Rules = Partial<Linter.RulesRecord>;

/** The rules eslint.config.js gives a file (no parse, no type information: fast). */
async function rulesFor(file: string): Promise<Rules> {
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(path.join(ROOT, file))) as {
    rules?: Rules;
  };
  return config.rules ?? {};
}

/** The messages of the two house rules, as eslint.config.js sets them for `file`, on `code`. */
function lint(rules: Rules, code: string): Array<{ ruleId: string | null; line: number }> {
  const only: Rules = {};
  for (const name of ['max-lines', 'no-restricted-syntax']) {
    if (rules[name] !== undefined) {
      only[name] = rules[name];
    }
  }
  const messages = new Linter({ configType: 'flat' }).verify(
    code,
    [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, rules: only }],
    'probe.ts',
  );
  return messages.map((m) => ({ ruleId: m.ruleId, line: m.line }));
}

const SQL_OUTSIDE = [
  "import type { DataSource } from 'typeorm';",
  'export async function probe(dataSource: DataSource, client: any): Promise<void> {',
  "  await dataSource.query('SELECT 1');",
  "  await dataSource.manager.query('SELECT 2');",
  "  await dataSource.createQueryBuilder().select('1').getRawOne();",
  // Temporal Queries of a workflow handle: not SQL.
  "  await client.workflow.getHandle('agent-x').query('agentState');",
  "  const handle = client.workflow.getHandle('agent-y');",
  "  await handle.query('agentState');",
  '}',
].join('\n');

/** A file of `n` lines that are blank or comments only, beyond the first. */
function linesOf(n: number): string {
  return ['export const x = 1;', ...Array.from({ length: n - 1 }, (_, i) => (i % 2 === 0 ? '' : '// a comment'))].join(
    '\n',
  );
}

describe('the house rules in eslint.config.js (issue 35)', () => {
  let service: Rules;
  beforeAll(async () => {
    service = await rulesFor('src/billing/billing.service.ts');
  });

  it('report .query( and query builders outside repositories, but not a Temporal Query of a workflow handle', () => {
    expect(lint(service, SQL_OUTSIDE)).toEqual([
      { ruleId: 'no-restricted-syntax', line: 3 },
      { ruleId: 'no-restricted-syntax', line: 4 },
      { ruleId: 'no-restricted-syntax', line: 5 },
    ]);
  });

  it.each(['src/billing/billing.repository.ts', 'src/common/cache/cache-channel.repository.ts', 'src/database/x.ts'])(
    'allow SQL in %s',
    async (file) => {
      expect(lint(await rulesFor(file), SQL_OUTSIDE)).toEqual([]);
    },
  );

  it.each(['src/runs/runs.service.ts', 'src/config/settings.spec.ts', 'workflows/x.ts', 'activities/x.ts'])(
    'limit %s to 350 lines, counting blank lines and comments',
    async (file) => {
      const rules = await rulesFor(file);
      expect(lint(rules, linesOf(350))).toEqual([]);
      expect(lint(rules, linesOf(351))).toEqual([{ ruleId: 'max-lines', line: 351 }]);
    },
  );

  it('except migrations from the line limit', async () => {
    expect(lint(await rulesFor('src/database/migrations/1764800000000-credit-holds.ts'), linesOf(500))).toEqual([]);
  });
});
