/** `npm run temporal:install`: obtains the Temporal CLI into the tool cache now (once per machine). */
import { ensureTemporalCli } from './runtime/temporal.js';

ensureTemporalCli((line) => console.log(`[temporal] ${line}`)).then(
  (cliPath) => console.log(`[temporal] using ${cliPath}`),
  (err: unknown) => {
    console.error(`[temporal] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
