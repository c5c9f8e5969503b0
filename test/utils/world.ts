import type { ReferenceSite } from '../../examples/site/site.js';
import { FakeModel } from '../fixtures/fake-model.js';
import { Http } from './http.js';
import { siteEnv, testSites, type TestSites } from './site.js';
import { Stack } from './stack.js';
import { registerAdmin } from './admin.js';
import { type TestUser } from './users.js';

/**
 * What the agent, webhook and chat suites run against: a reference site, the fake model, the real
 * service (API and, by default, a worker) trusting both, and an admin who can set tiers and credits.
 */
export interface World {
  sites: TestSites;
  site: ReferenceSite;
  model: FakeModel;
  stack: Stack;
  http: Http;
  admin: TestUser;
  stop(): Promise<void>;
}

export async function startWorld(
  options: {
    worker?: boolean;
    workerHttp?: boolean;
    env?: Record<string, string>;
    /** The reference site is announced as the demo site (DEMO_SITE_URL), as `npm start` does with its own. */
    demoSite?: boolean;
  } = {},
): Promise<World> {
  const sites = await testSites();
  const site = await sites.start();
  const model = await FakeModel.start();
  const stack = await Stack.start({
    worker: options.worker,
    workerHttp: options.workerHttp,
    env: {
      ...siteEnv(sites, [site]),
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
      ...(options.demoSite === true ? { DEMO_SITE_URL: site.url } : {}),
      ...options.env,
    },
  });
  const http = new Http(stack.baseUrl);
  const admin = await registerAdmin(http, stack);
  return {
    sites,
    site,
    model,
    stack,
    http,
    admin,
    async stop() {
      await stack.stop();
      await model.stop();
      await sites.stopAll();
    },
  };
}
