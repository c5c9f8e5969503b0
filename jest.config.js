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
  // Checks every answer of the service the suites receive against its OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/setup/contract-setup.js'],
  testTimeout: 60_000,
  maxWorkers: 2,
  verbose: true,
};
