/** The values a user's fields may take, and how emails are compared: used by features that never touch the users table. */
export const TIERS = ['free', 'pro', 'harness', 'team'] as const;
export type Tier = (typeof TIERS)[number];

export const ROLES = ['user', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const SUBSCRIPTION_STATUSES = ['active', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** Emails are compared and stored trimmed and lower-cased (registration, login, the admin command). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
