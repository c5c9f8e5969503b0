import { createHmac } from 'node:crypto';

/** A Standard Webhooks secret's prefix; the key is the base64 after it. */
const NOTIFY_SECRET_PREFIX = 'whsec_';

/**
 * The Standard Webhooks headers of one attempt (https://www.standardwebhooks.com): `webhook-id` (the
 * message's id, the same on every attempt), `webhook-timestamp` (seconds, this attempt's) and
 * `webhook-signature`: `v1,` and the base64 HMAC-SHA256, keyed with the secret's bytes (the base64
 * after `whsec_`), of `<id>.<timestamp>.<body>`.
 */
export function standardWebhookHeaders(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const key = Buffer.from(
    secret.startsWith(NOTIFY_SECRET_PREFIX) ? secret.slice(NOTIFY_SECRET_PREFIX.length) : secret,
    'base64',
  );
  const signature = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
