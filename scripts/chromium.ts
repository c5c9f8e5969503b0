/** `npm run chromium:install`: obtains the Chromium of the browser tests now (once per machine). */
import { ensureChromium } from './runtime/chromium.js';
import { answerHelp } from './runtime/command-line.js';

answerHelp(
  'usage: npm run chromium:install\nObtains the Chromium of the browser tests into the tool cache (once per machine) and prints its path.',
);

ensureChromium((line) => console.log(`[chromium] ${line}`)).then(
  (file) => console.log(`[chromium] using ${file}`),
  (err: unknown) => {
    console.error(`[chromium] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
