import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Provider from 'oidc-provider';
import { issueServerCert, type TestCa } from '../../examples/site/tls.js';
import { httpsRequest } from './site.js';

export const OIDC_SITE_SCOPES = ['read', 'write'];

/**
 * A site whose authorization server is not ours: the third-party `oidc-provider` (a certified
 * OpenID Provider) as a plain OAuth 2.0 server, with a static public client `agentsite` (no secret,
 * PKCE S256 required), its development login/consent pages, opaque access tokens for the site's
 * API (resource indicators), and, on the same HTTPS host, the agentsite manifest and one tool that
 * accepts only those tokens. Every request to its token endpoint is recorded.
 */
export class OidcProviderSite {
  /** Method and path of each request that reached the token endpoint, in order. */
  readonly tokenRequests: string[] = [];
  /** Successful tool calls, with the account the token was issued for. */
  readonly toolCalls: Array<{ accountId: string; scope: string }> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: https.Server,
    readonly url: string,
  ) {}

  private authorizationServer: Provider | undefined;

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get provider(): Provider {
    if (this.authorizationServer === undefined) {
      throw new Error('call allowRedirect first: the client is registered with its redirect URI');
    }
    return this.authorizationServer;
  }

  get issuer(): string {
    return this.url;
  }

  /** Listens on a free port of 127.0.0.1, named localhost in its URLs (certificate of the test CA). */
  static async start(ca: TestCa): Promise<OidcProviderSite> {
    const tls = await issueServerCert(ca);
    const server = https.createServer({ key: tls.key, cert: tls.cert });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const site = new OidcProviderSite(server, `https://localhost:${(server.address() as AddressInfo).port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void site.handle(req, res));
    server.on('connection', (socket: Socket) => {
      site.sockets.add(socket);
      socket.on('close', () => site.sockets.delete(socket));
    });
    return site;
  }

  /** Registers the static client `agentsite` with the service's callback as its one redirect URI. */
  allowRedirect(redirectUri: string): void {
    const resource = `${this.url}/api`;
    this.authorizationServer = new Provider(this.issuer, {
      clients: [
        {
          client_id: 'agentsite',
          token_endpoint_auth_method: 'none',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      ],
      pkce: { methods: ['S256'], required: () => true },
      features: {
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({ scope: OIDC_SITE_SCOPES.join(' '), accessTokenFormat: 'opaque' }),
        },
      },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      issueRefreshToken: () => true,
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, RefreshToken: 86_400 },
      cookies: { keys: ['agentsite-test-cookie-key-0123456789'] },
    });
  }

  manifest(): Record<string, unknown> {
    return {
      name: 'OIDC Provider Site',
      version: '1.0.0',
      description: 'A site whose authorization server is the third-party oidc-provider.',
      server: { url: `${this.url}/api` },
      auth: {
        type: 'oauth2',
        authorization_url: `${this.url}/auth`,
        token_url: `${this.url}/token`,
        scopes: OIDC_SITE_SCOPES,
        issuer: this.issuer,
      },
      tools: [
        {
          name: 'get_profile',
          description: 'Who the token belongs to.',
          input_schema: { type: 'object', properties: {} },
        },
      ],
    };
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (path === '/token') {
      this.tokenRequests.push(`${req.method} ${path}`);
    }
    if (req.method === 'GET' && path === '/.well-known/agentsite.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.manifest()));
      return;
    }
    if (req.method === 'POST' && path === '/api/tools/get_profile') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const found = token === undefined ? undefined : await this.provider.AccessToken.find(token);
      if (found === undefined || found.isExpired || !(found.scope ?? '').split(' ').includes('read')) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid token"}');
        return;
      }
      this.toolCalls.push({ accountId: found.accountId, scope: found.scope ?? '' });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ accountId: found.accountId }));
      return;
    }
    // The provider's Koa callback answers the request itself and does not reject.
    void this.provider.callback()(req, res);
  }
}

/**
 * Plays a user's browser at oidc-provider's development login and consent pages (with cookies, no
 * automatic redirects) and returns the redirect to the service's callback.
 */
export async function approveAtOidcProvider(
  ca: TestCa,
  authorizationUrl: string,
  login: string,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const jar = new Map<string, string>();
  let url = new URL(authorizationUrl);
  let form: Record<string, string> | undefined;
  for (let step = 0; step < 20; step += 1) {
    const answer = await httpsRequest(ca, url.toString(), {
      method: form === undefined ? 'GET' : 'POST',
      body: form === undefined ? undefined : new URLSearchParams(form).toString(),
      headers: {
        cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
    });
    const setCookie = answer.headers['set-cookie'] ?? [];
    for (const cookie of Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    form = undefined;
    if (answer.status >= 300 && answer.status < 400) {
      const next = new URL(String(answer.headers.location), url);
      if (next.origin !== origin) {
        return next;
      }
      url = next;
    } else if (answer.status === 200 && answer.body.includes('name="prompt" value="login"')) {
      form = { prompt: 'login', login, password: 'any' };
    } else if (answer.status === 200 && answer.body.includes('name="prompt" value="consent"')) {
      if (decision === 'deny') {
        url = new URL(`${url.pathname}/abort`, url);
      } else {
        form = { prompt: 'consent' };
      }
    } else {
      throw new Error(`oidc-provider answered ${answer.status} at ${url.pathname}: ${answer.body.slice(0, 500)}`);
    }
  }
  throw new Error('oidc-provider did not redirect back within 20 steps');
}
