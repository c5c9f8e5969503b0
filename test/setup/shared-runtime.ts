/** What the global setup started, handed to the test files through environment variables. */
export const TEST_ENV = {
  databaseUrl: 'AGENTSITE_TEST_DATABASE_URL',
  temporalAddress: 'AGENTSITE_TEST_TEMPORAL_ADDRESS',
  temporalCli: 'AGENTSITE_TEST_TEMPORAL_CLI',
  workDir: 'AGENTSITE_TEST_WORK_DIR',
  /** The Chromium of the browser suites, or CHROMIUM_UNAVAILABLE when none could be obtained. */
  chromium: 'AGENTSITE_TEST_CHROMIUM',
  chromiumProblem: 'AGENTSITE_TEST_CHROMIUM_PROBLEM',
  /** The one stripe-mock of the run (http://127.0.0.1:<port>), or, when it could not be had, stripeProblem says why. */
  stripeApiBase: 'AGENTSITE_TEST_STRIPE_API_BASE',
  stripeProblem: 'AGENTSITE_TEST_STRIPE_PROBLEM',
} as const;

export function testEnv(name: keyof typeof TEST_ENV): string {
  const value = process.env[TEST_ENV[name]];
  if (value === undefined) {
    throw new Error(
      `${TEST_ENV[name]} is not set: run the tests with "npm test" (the global setup starts the runtime)`,
    );
  }
  return value;
}
