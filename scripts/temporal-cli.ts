/** `npm run temporal:install`: obtains the Temporal CLI into the tool cache now (once per machine). */
import { ensureTemporalCli } from './runtime/temporal.js';
import { answerHelp } from './runtime/command-line.js';

answerHelp(
  'usage: npm run temporal:install\nObtains the Temporal CLI (TEMPORAL_CLI_PATH, the tool cache, PATH; else a download or go install into the tool cache) and prints its path.',
);

ensureTemporalCli((line) => console.log(`[temporal] ${line}`)).then(
  (cliPath) => console.log(`[temporal] using ${cliPath}`),
  (err: unknown) => {
    console.error(`[temporal] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
