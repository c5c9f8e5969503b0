import base from './jest.config.js';

/**
 * `npm run test:unit`: the unit specs (`*.spec.js`) alone, fast: no global setup, so no PostgreSQL,
 * no Temporal server and no browser. A spec that needs either belongs under test/ as an e2e suite
 * (its helpers read what the global setup started and fail at once without it). `npm test` still
 * runs these together with everything else (jest.config.js).
 */
export default {
  ...base,
  testMatch: ['<rootDir>/**/*.spec.js'],
  globalSetup: undefined,
  globalTeardown: undefined,
};
