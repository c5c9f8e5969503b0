import base from './jest.config.js';

/**
 * `npm run test:workflows`: the workflow layer's tests (`test/workflows/*.workflow-spec.js`), the
 * shipped workflow bundle in a real Worker with mocked activities. No global setup: each file starts
 * its own Temporal dev server (TestWorkflowEnvironment.createLocal over the cached Temporal CLI) and
 * needs no PostgreSQL, stripe-mock or browser. `npm test` runs them too (jest.config.js).
 */
export default {
  ...base,
  testMatch: ['<rootDir>/test/workflows/**/*.workflow-spec.js'],
  globalSetup: undefined,
  globalTeardown: undefined,
  setupFilesAfterEnv: [],
};
