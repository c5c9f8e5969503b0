import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../scripts/runtime/processes.js';
import { embeddedDbPasswordFile } from '../../src/config/settings.js';
import { expectError, Http } from '../utils/http.js';
import { Stack } from '../utils/stack.js';
import { registerUser, uniqueEmail } from '../utils/users.js';

const ADMIN_CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'admin.js');

interface CliAnswer {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real operator command (`npm run admin -- …` runs this same file after building). */
function adminCli(args: string[], env: Record<string, string>): Promise<CliAnswer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ADMIN_CLI, ...args], {
      // Only what an operator's shell would have: no secrets of the service are needed to change a role.
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'admin-')),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('admins are made by the operator command, never by registering (e2e)', () => {
  let stack: Stack;
  let http: Http;
  let db: Record<string, string>;
  // An address the old ADMIN_EMAILS setting lists: it must make nobody an admin any more.
  const listed = uniqueEmail('listed');

  beforeAll(async () => {
    stack = await Stack.start({ worker: false, env: { ADMIN_EMAILS: `${listed},${listed.toUpperCase()}` } });
    http = new Http(stack.baseUrl);
    db = { DATABASE_URL: stack.env.DATABASE_URL! };
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('an ADMIN_EMAILS address registers as a user; grant and revoke change the same token on its next request', async () => {
    const person = await registerUser(http, { email: listed });
    const token = person.token;
    expect((await http.get('/api/me', { token })).body.role).toBe('user');
    expectError(await http.get('/api/admin/users', { token }), 'ADMIN_REQUIRED', 403);

    const granted = await adminCli(['grant', listed.toUpperCase()], db);
    expect(granted).toEqual({ code: 0, stdout: `granted admin to ${listed}\n`, stderr: '' });
    // No new login: the token held since registration is an admin's from the next request on.
    expect((await http.get('/api/admin/users', { token })).status).toBe(200);
    expect((await http.get('/api/me', { token })).body.role).toBe('admin');

    // Granting an admin again changes nothing and says so.
    expect(await adminCli(['grant', listed], db)).toEqual({
      code: 0,
      stdout: `${listed} is already an admin\n`,
      stderr: '',
    });
    const list = await adminCli(['list'], db);
    expect(list.code).toBe(0);
    const createdAt = (await http.get('/api/me', { token })).body.createdAt as string;
    expect(list.stdout.split('\n')).toContain(`${listed}\t${person.id}\tregistered ${createdAt}`);

    const revoked = await adminCli(['revoke', listed], db);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout.split('\n')[0]).toBe(`revoked admin from ${listed}`);
    expectError(await http.get('/api/admin/users', { token }), 'ADMIN_REQUIRED', 403);
    expect((await http.get('/api/me', { token })).body.role).toBe('user');
    expect((await adminCli(['list'], db)).stdout).not.toContain(listed);
    expect(await adminCli(['revoke', listed], db)).toEqual({
      code: 0,
      stdout: `${listed} is not an admin\n`,
      stderr: '',
    });
  });

  it('an unknown email and wrong usage fail with a clear line and a non-zero exit code', async () => {
    const nobody = uniqueEmail('nobody');
    for (const command of ['grant', 'revoke']) {
      const answer = await adminCli([command, nobody], db);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toBe(`no account with email ${nobody} (the person must register first)\n`);
      expect(answer.stdout).toBe('');
    }
    expect((await adminCli([], db)).code).toBe(2);
    for (const args of [
      ['grant'],
      ['promote', nobody],
      ['list', nobody],
      ['grant', 'not-an-email'],
      ['grant', nobody, 'x'],
    ]) {
      const answer = await adminCli(args, db);
      expect(answer.code).toBe(2);
      expect(answer.stderr).not.toBe('');
    }
    const help = await adminCli(['--help'], db);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('grant <email>');
  });

  it('works against the embedded PostgreSQL (DATABASE_URL unset), and names an unreachable database without its password', async () => {
    const user = await registerUser(http);
    // The test database is an embedded server: reach it as `npm start`'s, whose generated password is
    // kept in DATA_DIR/postgres-password.
    const url = new URL(db.DATABASE_URL!);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'admin-embedded-'));
    writeFileSync(embeddedDbPasswordFile(dataDir), decodeURIComponent(url.password), { mode: 0o600 });
    const embedded = { EMBEDDED_POSTGRES_PORT: url.port, DATA_DIR: dataDir };
    expect(await adminCli(['grant', user.email], embedded)).toMatchObject({
      code: 0,
      stdout: `granted admin to ${user.email}\n`,
    });
    expect((await http.get('/api/admin/users', { token: user.token })).status).toBe(200);

    const down = await adminCli(['list'], {
      DATABASE_URL: `postgres://agentsite:s3cret-pw@127.0.0.1:${await freePort()}/agentsite`,
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^cannot reach the database: .*ECONNREFUSED/);
    expect(down.stderr).not.toContain('s3cret-pw');
    const embeddedDown = await adminCli(['list'], { EMBEDDED_POSTGRES_PORT: String(await freePort()) });
    expect(embeddedDown.code).toBe(1);
    expect(embeddedDown.stderr).toContain('is `npm start` running?');
  });

  it('admins may still make admins through the API (role in PATCH /api/admin/users/:id)', async () => {
    const first = await registerUser(http);
    const second = await registerUser(http);
    expect((await adminCli(['grant', first.email], db)).code).toBe(0);
    const made = await http.patch(`/api/admin/users/${second.id}`, { role: 'admin' }, { token: first.token });
    expect(made.status).toBe(200);
    expect(made.body.role).toBe('admin');
    expect((await http.get('/api/admin/users', { token: second.token })).status).toBe(200);
    expect((await adminCli(['list'], db)).stdout).toContain(`${second.email}\t${second.id}\t`);
    expect((await http.patch(`/api/admin/users/${second.id}`, { role: 'user' }, { token: first.token })).status).toBe(
      200,
    );
    expectError(await http.get('/api/admin/users', { token: second.token }), 'ADMIN_REQUIRED', 403);
  });
});
