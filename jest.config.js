/**
 * Jest runs the compiled tests (npm test builds first), as native ES modules: no transform step,
 * so the code under test is exactly what `npm start` runs.
 */
export default {
  rootDir: 'dist',
  testEnvironment: 'node',
  transform: {},
  moduleFileExtensions: ['js', 'json'],
  testMatch: [
    '<rootDir>/**/*.spec.js',
    '<rootDir>/**/*.e2e-spec.js',
    '<rootDir>/**/*.browser-spec.js',
    '<rootDir>/**/*.workflow-spec.js',
  ],
  globalSetup: '<rootDir>/test/setup/global-setup.js',
  globalTeardown: '<rootDir>/test/setup/global-teardown.js',
  // Each worker's servers take ports from the worker's own range (test/setup/worker-ports.ts).
  setupFiles: ['<rootDir>/test/setup/worker-ports.js'],
  // Checks every answer of the service the suites receive against its OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/setup/contract-setup.js'],
  testTimeout: 60_000,
  // The longest suites first, by the durations committed in test/setup/suite-durations.json (a fresh
  // clone has no jest cache to order by): test/setup/sequencer.ts.
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  maxWorkers: 2,
  verbose: true,
};
