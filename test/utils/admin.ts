import pg from 'pg';
import type { Http } from './http.js';
import type { Stack } from './stack.js';
import { registerUser, type TestUser, uniqueEmail } from './users.js';

/**
 * Makes an existing account an admin straight in the stack's database, as `npm run admin -- grant`
 * does (that command itself is proven in admin.e2e-spec; spawning it for every suite's admin would
 * cost a process start each). The account's tokens are admin from their next request on.
 */
export async function grantAdmin(stack: Pick<Stack, 'env'>, email: string): Promise<void> {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await client.connect();
  try {
    const result = await client.query("UPDATE users SET role = 'admin' WHERE email = $1", [email.toLowerCase()]);
    if (result.rowCount !== 1) {
      throw new Error(`grantAdmin: no account with email ${email}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Registers a new user (terms accepted) on the stack and makes it an admin. The API process caches
 * the account (it was just used) until the users table's notification reaches it, within milliseconds:
 * this waits until `http`'s process answers it as an admin.
 */
export async function registerAdmin(http: Http, stack: Pick<Stack, 'env'>): Promise<TestUser> {
  const admin = await registerUser(http, { email: uniqueEmail('admin') });
  await grantAdmin(stack, admin.email);
  const deadline = Date.now() + 10_000;
  while ((await http.get('/api/me', { token: admin.token })).body?.role !== 'admin') {
    if (Date.now() > deadline) {
      throw new Error('registerAdmin: the API does not answer the account as an admin after 10 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return admin;
}
