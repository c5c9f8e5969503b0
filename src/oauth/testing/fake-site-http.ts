import type { SiteHttpClient, SiteRequest, SiteResponse } from '../../sites/site-http.js';

/** A token endpoint's answer: a status and a JSON body. */
export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * The site's side of OAuth for unit specs: every request the OAuth client makes (through
 * OAuthConfigs' fetch) lands here, is recorded with its form fields, and gets the next scripted
 * answer. No network.
 */
export class FakeSiteHttp implements Pick<SiteHttpClient, 'request'> {
  readonly requests: Array<{ url: string; form: URLSearchParams }> = [];
  readonly answers: Array<TokenAnswer | Error> = [];
  /** The raw body of each request (JSON for a registration). */
  readonly bodies: string[] = [];

  async request(request: SiteRequest): Promise<SiteResponse> {
    this.requests.push({ url: request.url, form: new URLSearchParams(request.body ?? '') });
    this.bodies.push(request.body ?? '');
    const answer = this.answers.shift();
    if (answer === undefined) {
      throw new Error(`the fake site has no answer scripted for ${request.method} ${request.url}`);
    }
    if (answer instanceof Error) {
      throw answer;
    }
    return {
      status: answer.status,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: Buffer.from(JSON.stringify(answer.body)),
      url: request.url,
    };
  }
}
