/**
 * An MCP client connecting to the service, as the client side of OAuth 2.1 does it, and the user's
 * part in Chromium: discover the authorization server from the MCP endpoint's protected-resource
 * metadata, register by dynamic client registration with a loopback redirect URI this file serves,
 * start an authorization request with PKCE S256, answer the console's consent page, exchange the
 * code, refresh. The SDK client's test reuses the page steps (answer the consent page, wait for the
 * redirect) with its own client doing the rest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import { issueServerCert, type TestCa } from '../../../examples/site/tls.js';

/** What an MCP client learns from the service: the resource and its authorization server's endpoints. */
export interface McpAuthorizationServer {
  /** `{base}/mcp`, the `resource` of every request. */
  resource: string;
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint: string;
  revocationEndpoint: string | undefined;
  scopesSupported: string[];
}

async function json(url: string): Promise<Record<string, unknown>> {
  const answer = await fetch(url);
  expect({ url, status: answer.status }).toEqual({ url, status: 200 });
  return (await answer.json()) as Record<string, unknown>;
}

/**
 * Discovery as an MCP client does it from only the service's address: the protected-resource
 * metadata of `/mcp` names the authorization server, whose metadata (RFC 8414, path inserted) names
 * its endpoints.
 */
export async function discoverAuthorizationServer(baseUrl: string): Promise<McpAuthorizationServer> {
  const resourceMetadata = await json(`${baseUrl}/.well-known/oauth-protected-resource/mcp`);
  const issuer = (resourceMetadata.authorization_servers as string[])[0]!;
  const issuerUrl = new URL(issuer);
  const path = issuerUrl.pathname === '/' ? '' : issuerUrl.pathname;
  const meta = await json(`${issuerUrl.origin}/.well-known/oauth-authorization-server${path}`);
  expect(meta.issuer).toBe(issuer);
  expect(meta.code_challenge_methods_supported).toContain('S256');
  return {
    resource: resourceMetadata.resource as string,
    issuer,
    authorizationEndpoint: meta.authorization_endpoint as string,
    tokenEndpoint: meta.token_endpoint as string,
    registrationEndpoint: meta.registration_endpoint as string,
    revocationEndpoint: meta.revocation_endpoint as string | undefined,
    scopesSupported: (meta.scopes_supported as string[] | undefined) ?? [],
  };
}

/** The app's side on this machine: its loopback redirect URI (answers a small page) and, optionally, its logo over HTTPS. */
export interface LoopbackApp {
  redirectUri: string;
  /** An https address of a 1×1 PNG (served with a certificate of the test CA), when started with one. */
  logoUri: string | undefined;
  stop(): Promise<void>;
}

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Starts the app's redirect page on 127.0.0.1 (and its logo over HTTPS when a test CA is given). */
export async function startLoopbackApp(options: { logoCa?: TestCa } = {}): Promise<LoopbackApp> {
  const redirect = createHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Test app</title><h1>Back in the test app</h1></html>');
  });
  const port = await listen(redirect);
  let logo: Server | undefined;
  let logoUri: string | undefined;
  if (options.logoCa !== undefined) {
    const tls = await issueServerCert(options.logoCa);
    logo = createHttpsServer({ cert: tls.cert, key: tls.key }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      res.end(PNG);
    });
    logoUri = `https://127.0.0.1:${await listen(logo)}/logo.png`;
  }
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    logoUri,
    async stop() {
      await close(redirect);
      if (logo !== undefined) {
        await close(logo);
      }
    },
  };
}

/** Registers an MCP client by dynamic client registration (RFC 7591): a public client with PKCE. */
export async function registerClient(
  as: McpAuthorizationServer,
  client: { name: string; redirectUri: string; logoUri?: string },
): Promise<string> {
  const answer = await fetch(as.registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: client.name,
      redirect_uris: [client.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(client.logoUri === undefined ? {} : { logo_uri: client.logoUri }),
    }),
  });
  const body = (await answer.json()) as { client_id?: string };
  expect({ status: answer.status, body }).toMatchObject({ status: 201, body: { client_id: expect.any(String) } });
  return body.client_id!;
}

/** One authorization request: its address (to open in the browser) and what the token request needs. */
export interface AuthorizationRequest {
  url: string;
  clientId: string;
  redirectUri: string;
  state: string;
  verifier: string;
  resource: string;
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

/** Builds an authorization request with PKCE S256, a fresh state and the MCP resource. */
export function authorizationRequest(
  as: McpAuthorizationServer,
  client: { clientId: string; redirectUri: string },
): AuthorizationRequest {
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(16));
  const url = new URL(as.authorizationEndpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
    state,
    resource: as.resource,
    ...(as.scopesSupported.length > 0 ? { scope: as.scopesSupported.join(' ') } : {}),
  }).toString();
  return { url: url.href, ...client, state, verifier, resource: as.resource };
}

/** Registers a client and starts its authorization request in the page: ends on the consent page or on sign-in. */
export async function startAuthorization(
  page: Page,
  as: McpAuthorizationServer,
  client: { name: string; redirectUri: string; logoUri?: string },
): Promise<AuthorizationRequest> {
  const clientId = await registerClient(as, client);
  const request = authorizationRequest(as, { clientId, redirectUri: client.redirectUri });
  await page.goto(request.url);
  await page.waitForURL((url) => url.pathname.startsWith('/connect/') || url.pathname === '/signin');
  return request;
}

/** The consent page of `appName` is shown (after signing in, when the browser had to). */
export async function waitForConsent(page: Page, appName: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: `Connect ${appName} to your account?` }).waitFor();
}

/** Where the app's redirect URI was reached, with its query (code, state, iss, or error). */
async function redirected(page: Page, redirectUri: string): Promise<URLSearchParams> {
  await page.waitForURL((url) => url.href.startsWith(redirectUri));
  return new URL(page.url()).searchParams;
}

/**
 * Approves on the consent page, in the workspace whose choice is labelled `workspace` (its name, or
 * "My account"), or in the one the page chose; returns the query the app's redirect URI received.
 */
export async function approveInPage(page: Page, redirectUri: string, workspace?: string): Promise<URLSearchParams> {
  if (workspace !== undefined) {
    await page
      .getByRole('group', { name: /^Where .* acts$/ })
      .getByLabel(workspace, { exact: true })
      .check();
  }
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  return redirected(page, redirectUri);
}

/** Denies on the consent page; returns the query the app's redirect URI received. */
export async function denyInPage(page: Page, redirectUri: string): Promise<URLSearchParams> {
  await page.getByRole('button', { name: 'Deny', exact: true }).click();
  return redirected(page, redirectUri);
}

export interface TokenAnswer {
  status: number;
  body: {
    access_token?: string;
    refresh_token?: string;
    token_type?: string;
    expires_in?: number;
    error?: string;
  };
}

async function tokenRequest(as: McpAuthorizationServer, form: Record<string, string>): Promise<TokenAnswer> {
  const answer = await fetch(as.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: answer.status, body: (await answer.json()) as TokenAnswer['body'] };
}

/** Exchanges the code the redirect URI received (with the PKCE verifier) for tokens. */
export function exchangeCode(as: McpAuthorizationServer, request: AuthorizationRequest, code: string) {
  return tokenRequest(as, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: request.redirectUri,
    client_id: request.clientId,
    code_verifier: request.verifier,
    resource: request.resource,
  });
}

/** Uses a refresh token (which the service rotates). */
export function refreshTokens(as: McpAuthorizationServer, request: AuthorizationRequest, refreshToken: string) {
  return tokenRequest(as, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: request.clientId,
    resource: request.resource,
  });
}
