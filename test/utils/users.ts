import { randomUUID } from 'node:crypto';
import type { Http } from './http.js';

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
