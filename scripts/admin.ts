/**
 * `npm run admin -- grant <email> | revoke <email> | list`: the operator's way to make and unmake
 * administrators (registering never makes one). Acts on existing accounts, in the database the service
 * uses: DATABASE_URL, or the embedded server of `npm start` (which must be running). In the container
 * image: `docker compose run --rm api node dist/scripts/admin.js grant <email>`.
 *
 * A change takes effect on the account's next request, with the tokens it already holds: every request
 * reads the user's row (JwtStrategy), and the role with it.
 */
import { DataSource } from 'typeorm';
import { loadSettings, SettingsError } from '../src/config/settings.js';
import { dataSourceOptions } from '../src/database/data-source.js';
import { UserRolesRepository } from '../src/users/user-roles.repository.js';

const USAGE = `usage: npm run admin -- <command>   (in the image: node dist/scripts/admin.js <command>)
  grant <email>    make the account with this email an administrator
  revoke <email>   take the administrator role away from it
  list             print the administrators`;

/** A failure the operator can act on: printed as one line, exit code 1. */
class CommandError extends Error {}

async function run(args: string[]): Promise<void> {
  const [command, email, ...extra] = args;
  if (command === undefined) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return;
  }
  const needsEmail = command === 'grant' || command === 'revoke';
  if (!['grant', 'revoke', 'list'].includes(command) || (needsEmail ? email === undefined : email !== undefined)) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  if (extra.length > 0 || (needsEmail && !email!.includes('@'))) {
    console.error(needsEmail ? `not an email address: "${[email, ...extra].join(' ')}"` : USAGE);
    process.exitCode = 2;
    return;
  }

  const settings = loadSettings();
  // Errors are reported here in one line each; a database log would repeat them: TypeORM's built-in
  // logger, switched off, instead of the service's.
  const dataSource = new DataSource({ ...dataSourceOptions(settings), logger: 'advanced-console', logging: false });
  try {
    await dataSource.initialize();
  } catch (err) {
    const where = settings.databaseUrl === undefined ? ' (the embedded PostgreSQL: is `npm start` running?)' : '';
    throw new CommandError(`cannot reach the database${where}: ${describe(err)}`);
  }
  try {
    const roles = new UserRolesRepository(dataSource);
    if (command === 'list') {
      const admins = await roles.admins();
      if (admins.length === 0) {
        console.log('no administrators');
      }
      for (const admin of admins) {
        console.log(`${admin.email}\t${admin.id}\tregistered ${admin.createdAt.toISOString()}`);
      }
      return;
    }
    const change = await roles.setRole(email!, command === 'grant' ? 'admin' : 'user');
    if (change === undefined) {
      throw new CommandError(`no account with email ${email!.trim().toLowerCase()} (the person must register first)`);
    }
    if (command === 'grant') {
      console.log(change.changed ? `granted admin to ${change.email}` : `${change.email} is already an admin`);
    } else {
      console.log(change.changed ? `revoked admin from ${change.email}` : `${change.email} is not an admin`);
      if (change.changed && (await roles.admins()).length === 0) {
        console.log('note: no administrators are left');
      }
    }
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') {
      throw new CommandError('the database has no users table yet: start the service once (it applies migrations)');
    }
    throw err;
  } finally {
    await dataSource.destroy();
  }
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map(describe).join('; ');
  }
  return err instanceof Error ? err.message || err.name : String(err);
}

run(process.argv.slice(2)).catch((err: unknown) => {
  const known = err instanceof CommandError || err instanceof SettingsError;
  console.error(known ? (err as Error).message : `admin command failed: ${describe(err)}`);
  process.exit(1);
});
