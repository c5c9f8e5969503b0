/**
 * What a person reads when the API refuses something: a sentence for every error code, a label for
 * every field the console sends, and class-validator's phrasing rewritten into plain words.
 *
 * The rule:
 * - The whole error is one sentence (`sentenceOf`). The API's own message is shown when it is written
 *   for people and stands alone (no field details) and names no API internals: no path ("/api/…"), no
 *   HTTP method, no error code, no header, no identifier in camelCase, no "endpoint". Otherwise, and
 *   always for VALIDATION_ERROR, INTERNAL_ERROR, no answer, and an answer with field details, the
 *   console's sentence for the code is shown (the details say what is wrong, beside each field).
 * - A field problem is shown beside its field, without the field's name (the label is right there),
 *   or, when the form has no such field, in the error's list as "<label>: <problem>". A problem of a
 *   part of the field (a row of the payload schema) names the part: "Field 1's type: must be …".
 * - The code, the request id and the API's raw message stay in the error's "Details for support".
 *
 * A new error code without a sentence, or a new request field without a label, fails the console's
 * typecheck (both maps are typed from the OpenAPI document).
 */
import type { components, paths } from './schema.gen';

export type ErrorCode = components['schemas']['ErrorCode'];

/** One sentence per code of the specification (src/common/error-codes.ts) and INTERNAL_ERROR. */
export const CODE_SENTENCES: Record<ErrorCode, string> = {
  UNAUTHORIZED: 'You are not signed in, or the email or password is wrong.',
  TOKEN_EXPIRED: 'Your session has expired. Sign in again.',
  TOKEN_REVOKED: 'Your session was ended. Sign in again.',
  INVALID_TOKEN: 'Your session is not valid any more. Sign in again.',
  ADMIN_REQUIRED: 'Only an administrator can do this.',
  TERMS_NOT_ACCEPTED: 'Accept the terms of service first.',
  RATE_LIMITED: 'Too many attempts in a short time. Wait a moment and try again.',
  OUTGOING_RATE_LIMITED: 'The site was asked too often in a short time. Wait a moment and try again.',
  NO_CREDITS: 'Your credit balance is used up. Buy credits on the Plan & credits page.',
  NO_PAYMENT_METHOD: 'Add a payment method first, under "Payment method" on the Plan & credits page.',
  PAYMENT_FAILED: 'The payment did not go through. Check the card or use another one.',
  SUBSCRIPTION_PAST_DUE: 'Your subscription payment is overdue. Pay it on the Plan & credits page to go on.',
  TIER_REQUIRED: 'Your plan does not include this. A higher plan on the Plan & credits page does.',
  FEATURE_LIMIT_REACHED: 'Your plan allows no more of these. A higher plan on the Plan & credits page allows more.',
  WORKSPACE_REQUIRED: 'This can only be done in a team workspace.',
  INVALID_SESSION: 'This conversation cannot be used any more. Start a new one.',
  SESSION_NOT_FOUND: 'This conversation does not exist any more.',
  SESSION_EXPIRED: 'This conversation has expired. Start a new one.',
  CHAT_TIMEOUT: 'The answer took too long. Try again.',
  STREAM_ABORTED: 'The answer stopped before it was complete.',
  MODEL_ERROR: 'The AI model could not answer. Try again in a moment.',
  TOOL_EXECUTION_ERROR: 'The site could not do what was asked.',
  TOKEN_EXISTS: 'A token is already stored for this site. Replace it instead.',
  VAULT_LIMIT_REACHED: 'Your vault is full for your plan. Remove a site or choose a higher plan.',
  MANIFEST_NOT_FOUND: 'Nothing at this address answers as an agentsite site or an MCP server.',
  MANIFEST_INVALID: 'What the site describes of itself (its manifest or its list of tools) has mistakes, listed below.',
  AGENT_NOT_FOUND: 'This agent does not exist any more.',
  AGENT_LIMIT_REACHED: 'Your plan allows no more agents. Delete one or choose a higher plan.',
  RUN_NOT_FOUND: 'This run does not exist any more.',
  RUN_NOT_CANCELLABLE: 'This run has already finished and cannot be cancelled.',
  AGENT_ALREADY_RUNNING: 'This agent is already running. Wait for the run to finish.',
  WEBHOOK_SECRET_INVALID: "The webhook's secret is not right.",
  WEBHOOK_PAYLOAD_INVALID: 'The webhook payload does not match its schema.',
  VALIDATION_ERROR: 'Some of what you entered needs a change.',
  INVALID_URL: 'The service only connects to public https:// addresses.',
  NOT_FOUND: 'This does not exist, or you cannot see it.',
  WORKSPACE_NOT_FOUND: 'This workspace does not exist any more, or you are no longer in it.',
  PERMISSION_DENIED: 'Your role does not allow this.',
  MEMBER_NOT_FOUND: 'This person is not a member of the workspace.',
  ROLE_CHANGE_FORBIDDEN: "This member's role cannot be changed.",
  INTERNAL_ERROR: 'Something failed on our side. Try again; if it keeps failing, contact support.',
};

/** Codes the console makes itself: no answer, or an answer that is not the API's error body. */
const LOCAL_SENTENCES: Record<string, string> = {
  NETWORK_ERROR: 'The service cannot be reached. Check your connection and try again.',
};

// ---- Field labels -------------------------------------------------------------------------------

type BodyOf<Op> = Op extends { requestBody?: infer R }
  ? [NonNullable<R>] extends [never]
    ? never
    : NonNullable<R> extends { content: { 'application/json': infer B } }
      ? B
      : never
  : never;
type RequestBodies = {
  [P in keyof paths]: { [M in keyof paths[P]]: BodyOf<NonNullable<paths[P][M]>> }[keyof paths[P]];
}[keyof paths];
type Join<P extends string, K extends string> = P extends '' ? K : `${P}.${K}`;
/** Every field path of a request body, arrays as `[]`: `trigger.schema[].type`. */
type FieldPaths<T, P extends string = ''> = T extends readonly (infer E)[]
  ? P extends ''
    ? never
    : `${P}[]` | FieldPaths<E, `${P}[]`>
  : T extends object
    ? string extends keyof T
      ? never // free-form objects (a tool's input): their keys are the site's, shown as they are
      : { [K in keyof T & string]-?: Join<P, K> | FieldPaths<NonNullable<T[K]>, Join<P, K>> }[keyof T & string]
    : never;
export type RequestField = FieldPaths<RequestBodies>;

/** A label, or one built from the path's positions (1-based: `trigger.schema[0].type` → "Field 1's type"). */
type Label = string | ((n: number[]) => string);
const nth = (n: number[], i = 0) => String((n[i] ?? 0) + 1);

/** A label for every field of every request body of the API (paths from the DTOs, arrays as []). */
export const FIELD_LABELS: Record<RequestField, Label> = {
  name: 'Name',
  email: 'Email',
  password: 'Password',
  version: 'Terms version',
  tier: 'Plan',
  credits: 'Credits',
  subscriptionStatus: 'Subscription status',
  role: 'Role',
  paymentMethodToken: 'Card',
  amount: 'Amount',
  url: 'Site address',
  protocol: 'Kind of site',
  token: 'Token',
  expiresAt: 'Expires',
  tools: 'Tools',
  'tools[]': (n) => `Tool ${nth(n)}`,
  code: 'Answer of the site',
  state: 'Connection attempt',
  iss: 'Issuer of the answer',
  error: 'Answer of the site',
  input: 'Input',
  systemPrompt: 'System prompt',
  siteIds: 'Sites',
  'siteIds[]': (n) => `Site ${nth(n)}`,
  model: 'Model',
  trigger: 'Trigger',
  'trigger.type': 'Trigger',
  'trigger.cron': 'Cron expression',
  'trigger.timezone': 'Time zone',
  'trigger.allowActionOverride': 'Allow action override',
  'trigger.schema': 'Payload schema',
  'trigger.schema[]': (n) => `Field ${nth(n)}`,
  'trigger.schema[].name': (n) => `Field ${nth(n)}'s name`,
  'trigger.schema[].type': (n) => `Field ${nth(n)}'s type`,
  'trigger.schema[].description': (n) => `Field ${nth(n)}'s description`,
  'trigger.schema[].required': (n) => `Field ${nth(n)}'s "required" choice`,
  sites: 'Sites',
  'sites[]': (n) => `Site ${nth(n)}`,
  'sites[].siteId': (n) => `Site ${nth(n)}`,
  'sites[].tools': (n) => `Tools of site ${nth(n)}`,
  'sites[].tools[]': (n) => `Tool ${nth(n, 1)} of site ${nth(n)}`,
  title: 'Title',
  content: 'Message',
  userId: 'New owner',
  payloads: 'Payloads',
  'payloads[]': (n) => `Payload ${nth(n)}`,
  'payloads[].metadata': (n) => `Payload ${nth(n)}'s metadata`,
  'payloads[].data': (n) => `Payload ${nth(n)}'s data`,
  burst: 'Burst size',
  approve: 'Your answer',
  workspaceId: 'Workspace',
  approvals: 'Approvals',
  'approvals.scopes': 'Calls that wait for approval',
  'approvals.scopes[]': (n) => `Kind of call ${nth(n)} that waits for approval`,
  'approvals.timeoutSeconds': 'How long a call waits for a decision',
  notify: 'Notifications',
  'notify.url': 'Notification address',
  'notify.events': 'Events to notify',
  'notify.events[]': (n) => `Event ${nth(n)} to notify`,
  decision: 'Your decision',
  note: 'Note',
};

/** Fields the API names that are no request field: the whole request, a page, a hop of a redirect. */
const OTHER_LABELS: Record<string, Label> = {
  body: 'The form',
  cursor: 'Page',
  limit: 'Page size',
  redirect: "The site's redirect",
  site: 'Site',
  approvalId: 'Approval',
};

/** `trigger.schema[0].type` → `trigger.schema[].type` and [0]. */
function normalise(field: string): { key: string; positions: number[] } {
  const positions: number[] = [];
  const key = field.replace(/\[(\d+)\]/g, (_m, n: string) => {
    positions.push(Number(n));
    return '[]';
  });
  return { key, positions };
}

/** The label a person reads for a field the API named; undefined for a field the console does not know. */
export function labelOf(field: string): string | undefined {
  const { key, positions } = normalise(field);
  const label = (FIELD_LABELS as Record<string, Label>)[key] ?? OTHER_LABELS[key];
  if (label !== undefined) {
    return typeof label === 'string' ? label : label(positions);
  }
  if (key.startsWith('input.')) {
    return field.slice('input.'.length); // a tool's own input field, as the tool's form labels it
  }
  return undefined;
}

// ---- Plain words --------------------------------------------------------------------------------

const REWRITES: Array<[RegExp, string | ((...m: string[]) => string)]> = [
  [/^must be longer than or equal to 1 characters?$/, "can't be empty"],
  [/^must be longer than or equal to (\d+) characters?$/, (_m, n) => `needs at least ${n} characters`],
  [/^must be shorter than or equal to (\d+) characters?$/, (_m, n) => `can be at most ${n} characters long`],
  [/^should not be empty$/, "can't be empty"],
  [/^must be a string$/, 'must be text'],
  [
    /^(must be an? (URL|url) address|is not a valid URL|is not a web address)$/,
    'not a web address (write it as https://…)',
  ],
  [/^must use https:\/\/$/, 'must start with https://'],
  [/^must be an email( address)?$/, 'not an email address'],
  [/^must be one of the following values: (.*)$/, (_m, v) => `must be one of ${v}`],
  [/^must be an integer number$/, 'must be a whole number'],
  [/^must be a number conforming to the specified constraints$/, 'must be a number'],
  [/^must not be less than (-?[\d.]+)$/, (_m, n) => `must be at least ${n}`],
  [/^must not be greater than (-?[\d.]+)$/, (_m, n) => `must be at most ${n}`],
  [/^must be a boolean value$/, 'must be yes or no'],
  [/^must be an array$/, 'must be a list'],
  [/^must be an object$/, 'must be a group of values'],
  [/^must contain at least (\d+) elements?$/, (_m, n) => `needs at least ${n}`],
  [/^must contain no more than (\d+) elements?$/, (_m, n) => `can have at most ${n}`],
  [/^must be a UUID$/, 'not one of the choices'],
  [/^must be a valid ISO 8601 date string$/, 'not a valid date and time'],
  [/^must match .* regular expression$/, 'has characters that are not allowed'],
  [/^must be a JSON object$/, 'could not be read'],
  [/^must not contain a NUL character.*$/, 'contains a character that is not allowed'],
  [/^should not exist$/, 'not expected here'],
  [/^must be an identifier of at most (\d+) characters$/, (_m, n) => `must be letters, digits or _ (at most ${n})`],
];

/**
 * A field's problem in plain words, as a fragment without the field's name ("can't be empty", "not a
 * web address (…)"): class-validator writes "<property> must be …", "each value in <property> …",
 * and the service "is …".
 */
export function plainProblem(field: string, message: string): string {
  const property =
    field
      .replace(/\[\d+\]/g, '')
      .split('.')
      .pop() ?? field;
  let text = message.trim();
  for (const prefix of [`each value in ${property} `, `property ${property} `, `${property} `]) {
    if (text.startsWith(prefix)) {
      text = text.slice(prefix.length);
      break;
    }
  }
  for (const [pattern, replacement] of REWRITES) {
    if (pattern.test(text)) {
      return typeof replacement === 'string' ? replacement : text.replace(pattern, replacement);
    }
  }
  return text.replace(/^is /, '');
}

/** "Field 1's type: must be one of …": a problem with the label of its field, for a list. */
export function labelled(label: string, problem: string): string {
  return asSentence(`${label}: ${problem}`);
}

/** "can't be empty" → "Can't be empty." */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') {
    return trimmed;
  }
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?)]$/.test(first) ? first : `${first}.`;
}

// ---- The error's sentence ----------------------------------------------------------------------

/** What the API's message may not contain to be shown to a person as it is. */
const INTERNALS = [
  /\/api\//,
  /\b(GET|POST|PUT|PATCH|DELETE) \//,
  /\b[A-Z]+_[A-Z_]+\b/,
  /\b[a-z]+[A-Z][A-Za-z]*\b/, // systemPrompt, siteIds: DTO and code names
  /\bX-[A-Za-z-]+/,
  /\b(Authorization|Bearer|JWT|endpoint|DTO|SetupIntent)\b/i,
  /\b(must be longer|must be shorter|must be an? [a-z]+ (number|value|string))\b/,
];

export function speaksPlainly(message: string): boolean {
  return message.trim() !== '' && !INTERNALS.some((pattern) => pattern.test(message));
}

/** What sentenceOf reads of an error: ApiError has these. */
export interface ErrorFacts {
  code: string;
  message: string;
  details: ReadonlyArray<{ field: string; message: string }>;
}

/** Codes whose message is never shown as it is: generic, or not the API's words at all. */
const NEVER_AS_IS = new Set(['VALIDATION_ERROR', 'INTERNAL_ERROR', 'NETWORK_ERROR']);

/** The one sentence a person reads for this error (the rule at the top of this file). */
export function sentenceOf(error: ErrorFacts): string {
  const ours = (CODE_SENTENCES as Record<string, string>)[error.code] ?? LOCAL_SENTENCES[error.code];
  if (!NEVER_AS_IS.has(error.code) && error.details.length === 0 && speaksPlainly(error.message)) {
    return asSentence(error.message);
  }
  if (ours !== undefined) {
    return ours;
  }
  const status = /^HTTP_(\d+)$/.exec(error.code)?.[1];
  return status === undefined
    ? CODE_SENTENCES.INTERNAL_ERROR
    : `The service answered with an error (${status}). Try again; if it keeps failing, contact support.`;
}

/** One field problem as a person reads it: "<label>: <problem>." ("System prompt: can't be empty."). */
export interface FieldProblemText {
  field: string;
  /** undefined: a field the console does not know (a manifest's, a site's): shown as the API named it. */
  label: string | undefined;
  /** The problem without the label ("can't be empty"). */
  problem: string;
}

export function problemsOf(error: ErrorFacts): FieldProblemText[] {
  // A manifest's problems name the manifest's fields (version, tools[0].description), not the form's.
  const ours = error.code !== 'MANIFEST_INVALID';
  return error.details.map((d) => ({
    field: d.field,
    label: ours ? labelOf(d.field) : undefined,
    problem: ours ? plainProblem(d.field, d.message) : d.message,
  }));
}

/** Whether `field` is `under` or inside it (`trigger.schema[0].type` is under `trigger.schema`). */
export function isUnder(field: string, under: string): boolean {
  return field === under || field.startsWith(`${under}.`) || field.startsWith(`${under}[`);
}
