import { describe, expect, it } from '@jest/globals';
import { hashPassword, verifyPassword } from './password.js';

describe('password hashing', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(hash).not.toContain('correct horse');
    await expect(verifyPassword('correct horse battery staple', hash)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', hash)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password!!'), hashPassword('same password!!')]);
    expect(a).not.toBe(b);
  });

  it('refuses stored values of another format', async () => {
    await expect(verifyPassword('x', 'md5$abc')).resolves.toBe(false);
  });
});
