import type { SiteResponse } from '../sites/site-http.js';
import { CHECK_TIMEOUT_MS, type CheckerHttp, excerpt } from './site-answers.js';

const APPROVE = /approve|allow|accept|authori[sz]e|consent|continue|grant|yes/i;

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  const raw = match?.[2] ?? match?.[3] ?? match?.[4];
  return raw?.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
}

/**
 * Passes a consent page as a user would: the page's first form, its hidden fields kept, the account's
 * name in the text field and its password in the password field, submitted with the approving button.
 * Sign-in pages that need JavaScript or several steps are beyond it (the rules say so).
 */
export async function submitConsent(
  http: CheckerHttp,
  authorizationUrl: string,
  account: { username: string; password: string },
): Promise<SiteResponse> {
  const page = await http.request({ method: 'GET', url: authorizationUrl, timeoutMs: CHECK_TIMEOUT_MS });
  if (page.status !== 200) {
    throw new Error(`the authorization endpoint answered HTTP ${page.status}: ${excerpt(page)}`);
  }
  const html = page.body.toString('utf8');
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (form === null) {
    throw new Error('the consent page has no <form> to sign in and approve with');
  }
  const fields = new URLSearchParams();
  let user = false;
  let password = false;
  let approve: [string, string] | undefined;
  for (const [tag] of form[2]!.matchAll(/<(input|button)\b[^>]*>/gi)) {
    const name = attribute(tag, 'name');
    const type = (
      attribute(tag, 'type') ?? (tag.toLowerCase().startsWith('<button') ? 'submit' : 'text')
    ).toLowerCase();
    const value = attribute(tag, 'value') ?? '';
    if (name === undefined) {
      continue;
    }
    if (type === 'password') {
      fields.set(name, account.password);
      password = true;
    } else if (type === 'text' || type === 'email') {
      fields.set(name, account.username);
      user = true;
    } else if (type === 'submit') {
      if (approve === undefined && APPROVE.test(`${name} ${value}`)) {
        approve = [name, value];
      }
    } else {
      fields.set(name, value);
    }
  }
  if (!user || !password) {
    throw new Error('the consent page has no user name and password fields to sign in with');
  }
  if (approve !== undefined) {
    fields.set(approve[0], approve[1]);
  }
  // The password goes to the authorization server only: the form's action (relative to the page that
  // answered, after any redirect) must be on the authorization URL's origin.
  const action = new URL(attribute(form[1]!, 'action') ?? page.url, page.url);
  const origin = new URL(authorizationUrl).origin;
  if (action.origin !== origin) {
    throw new Error(
      `the consent form posts to ${action.origin}, not to the authorization server's origin ${origin}: the test account's password is not sent there`,
    );
  }
  return http.request({
    method: 'POST',
    url: action.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
    timeoutMs: CHECK_TIMEOUT_MS,
    redirect: 'manual',
  });
}
