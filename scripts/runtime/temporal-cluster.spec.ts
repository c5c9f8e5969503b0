import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { TEMPORAL_SERVER_VERSION, cachedServerDir, ensureTemporalServer } from './temporal-cluster.js';

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

function script(file: string, body: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
}

/**
 * A scratch machine with a stand-in for go: `go install <pkg>@<v>` records its arguments and puts an
 * executable named after the package's last element into GOBIN; `go env GOMODCACHE` names a module
 * cache holding the server module's PostgreSQL schema.
 */
function machine(): { env: NodeJS.ProcessEnv; record: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'temporal-cluster-spec-'));
  roots.push(root);
  const cache = path.join(root, 'cache');
  const bin = path.join(root, 'bin');
  const modcache = path.join(root, 'mod');
  const record = path.join(root, 'go-calls');
  const schema = path.join(modcache, `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`, 'schema/postgresql/v12');
  for (const db of ['temporal', 'visibility']) {
    mkdirSync(path.join(schema, db, 'versioned', 'v1.0'), { recursive: true });
    writeFileSync(path.join(schema, db, 'versioned', 'v1.0', 'schema.sql'), `-- ${db}`);
  }
  script(
    path.join(bin, 'go'),
    [
      `if [ "$1" = env ]; then echo ${modcache}; exit 0; fi`,
      `echo "$@" >> ${record}`,
      'pkg=${2%@*}',
      'name=${pkg##*/}',
      '/bin/mkdir -p "$GOBIN"', // as go does
      `printf '#!/bin/sh\\n' > "$GOBIN/$name"`,
      '/bin/chmod +x "$GOBIN/$name"',
    ].join('\n'),
  );
  return { env: { AGENTSITE_CACHE_DIR: cache, PATH: `${bin}:/usr/bin:/bin` }, record };
}

describe('ensureTemporalServer', () => {
  it("builds the server and temporal-sql-tool of compose's release once, with the release's schema", async () => {
    const { env, record } = machine();
    const dir = cachedServerDir(env);
    await expect(ensureTemporalServer(() => undefined, env)).resolves.toBe(dir);
    expect(readFileSync(record, 'utf8').trim().split('\n')).toEqual([
      `install go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
      `install go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
    ]);
    expect(readdirSync(dir).sort()).toEqual(['schema', 'server', 'sql']);
    expect(readFileSync(path.join(dir, 'schema/postgresql/v12/visibility/versioned/v1.0/schema.sql'), 'utf8')).toBe(
      '-- visibility',
    );
    // Staging and lock are gone; only the versioned directory stays.
    expect(readdirSync(path.dirname(path.dirname(dir)))).toEqual([`temporal-server-v${TEMPORAL_SERVER_VERSION}`]);
    // Found the second time: go is not run again.
    await expect(ensureTemporalServer(() => undefined, env)).resolves.toBe(dir);
    expect(readFileSync(record, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('builds again over what an interrupted build left (a server without its sql tool or schema)', async () => {
    const { env, record } = machine();
    const dir = cachedServerDir(env);
    script(path.join(dir, 'server'), 'exit 0');
    await expect(ensureTemporalServer(() => undefined, env)).resolves.toBe(dir);
    expect(readFileSync(record, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(existsSync(path.join(dir, 'sql'))).toBe(true);
    expect(existsSync(path.join(dir, 'schema/postgresql/v12/temporal/versioned'))).toBe(true);
  });

  it('says what it needs when no Go is on PATH, and leaves no lock behind', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'temporal-cluster-spec-'));
    roots.push(root);
    const env = { AGENTSITE_CACHE_DIR: path.join(root, 'cache'), PATH: path.join(root, 'empty') };
    await expect(ensureTemporalServer(() => undefined, env)).rejects.toThrow(/no Go toolchain is on PATH/);
    expect(readdirSync(path.join(root, 'cache'))).toEqual([]);
  });
});
