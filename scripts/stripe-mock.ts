/** `npm run stripe-mock:install`: obtains the stripe-mock of the Stripe tests now (once per machine). */
import { ensureStripeMock } from './runtime/stripe-mock.js';
import { answerHelp } from './runtime/command-line.js';

answerHelp(
  'usage: npm run stripe-mock:install\nObtains stripe-mock, the Stripe API double of the payment tests, into the tool cache (once per machine) and prints its path.',
);

ensureStripeMock((line) => console.log(`[stripe-mock] ${line}`)).then(
  (file) => console.log(`[stripe-mock] using ${file}`),
  (err: unknown) => {
    console.error(`[stripe-mock] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
