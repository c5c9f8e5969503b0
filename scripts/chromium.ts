/** `npm run chromium:install`: obtains the Chromium of the browser tests now (once per machine). */
import { ensureChromium } from './runtime/chromium.js';

ensureChromium((line) => console.log(`[chromium] ${line}`)).then(
  (file) => console.log(`[chromium] using ${file}`),
  (err: unknown) => {
    console.error(`[chromium] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
