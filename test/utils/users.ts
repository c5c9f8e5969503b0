import { randomUUID } from 'node:crypto';
import type { ReferenceSite } from '../../examples/site/site.js';
import type { Http, RequestOptions } from './http.js';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  token: string;
}

export const TEST_PASSWORD = 'correct horse battery staple';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomUUID().slice(0, 12)}@example.test`;
}

/** Registers a new user (and accepts the terms unless told not to). */
export async function registerUser(
  http: Http,
  options: { acceptTerms?: boolean; email?: string } = {},
): Promise<TestUser> {
  const email = options.email ?? uniqueEmail();
  const res = await http.post('/api/auth/register', { email, password: TEST_PASSWORD });
  if (res.status !== 201) {
    throw new Error(`register failed: ${res.status} ${res.text}`);
  }
  const user: TestUser = { id: res.body.user.id, email, password: TEST_PASSWORD, token: res.body.accessToken };
  if (options.acceptTerms !== false) {
    const accepted = await http.post('/api/auth/accept-terms', {}, { token: user.token });
    if (accepted.status !== 200) {
      throw new Error(`accept-terms failed: ${accepted.status} ${accepted.text}`);
    }
  }
  return user;
}

/** A new user whose tier and credits an admin set (`PATCH /api/admin/users/:id`). */
export async function registerUserWith(
  http: Http,
  admin: Pick<TestUser, 'token'>,
  plan: { tier?: string; credits?: number },
): Promise<TestUser> {
  const user = await registerUser(http);
  const set = await http.patch(`/api/admin/users/${user.id}`, plan, { token: admin.token });
  if (set.status !== 200) {
    throw new Error(`setting the user's tier or credits failed: ${set.status} ${set.text}`);
  }
  return user;
}

/**
 * Adds the reference site to the vault `as` speaks for (the user's own, or a workspace's through its
 * `x-workspace-id` header) with the site's API token of `account`; answers the site's id.
 */
export async function connectSite(
  http: Http,
  as: RequestOptions,
  site: Pick<ReferenceSite, 'url' | 'issueApiToken'>,
  account = 'alice',
): Promise<string> {
  const added = await http.post('/api/vault/sites', { url: site.url }, as);
  if (added.status !== 201) {
    throw new Error(`adding the site failed: ${added.status} ${added.text}`);
  }
  const token = await http.post(
    `/api/vault/sites/${added.body.id}/token`,
    { token: site.issueApiToken(account).token },
    as,
  );
  if (token.status !== 200 && token.status !== 201) {
    throw new Error(`saving the site's token failed: ${token.status} ${token.text}`);
  }
  return added.body.id as string;
}
