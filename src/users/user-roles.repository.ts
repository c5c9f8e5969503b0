import { type DataSource } from 'typeorm';
import { normalizeEmail, type Role } from './user-fields.js';

export interface AdminRow {
  id: string;
  email: string;
  createdAt: Date;
}

/** What a role change did: the account's id, and whether its role was already the one asked for. */
export interface RoleChange {
  id: string;
  email: string;
  changed: boolean;
}

/**
 * The SQL of the operator's admin command (scripts/admin.ts), which runs outside Nest: role changes
 * of existing accounts, named by email. One statement each, so a change and the answer about it
 * cannot be torn apart by a concurrent change.
 */
export class UserRolesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Sets the role of the account with this email; undefined when there is no such account. */
  async setRole(email: string, role: Role): Promise<RoleChange | undefined> {
    const rows: Array<{ id: string; email: string; changed: boolean }> = await this.dataSource.query(
      `WITH target AS (SELECT id, email, role FROM users WHERE email = $1),
            changed AS (
              UPDATE users u SET role = $2, updated_at = now()
              FROM target t WHERE u.id = t.id AND t.role <> $2
              RETURNING u.id)
       SELECT t.id, t.email, EXISTS (SELECT 1 FROM changed) AS changed FROM target t`,
      [normalizeEmail(email), role],
    );
    return rows[0];
  }

  async admins(): Promise<AdminRow[]> {
    const rows: Array<{ id: string; email: string; created_at: Date }> = await this.dataSource.query(
      `SELECT id, email, created_at FROM users WHERE role = 'admin' ORDER BY email`,
    );
    return rows.map((row) => ({ id: row.id, email: row.email, createdAt: row.created_at }));
  }
}
