/**
 * Runs the reference site on its own:
 *   node dist/examples/site/main.js [port] [redirect_uri] [ca_dir]
 * defaults: 8443, http://localhost:3000/api/oauth/callback, .data/demo-site
 * (`npm start` runs it for you, unless DEMO_SITE_PORT=0.)
 */
import { startDemoSite } from './demo.js';

const [portArg, redirectArg, dirArg] = process.argv.slice(2);
const port = Number(portArg ?? 8443);
const redirect = redirectArg ?? 'http://localhost:3000/api/oauth/callback';

startDemoSite({ dir: dirArg ?? '.data/demo-site', port, redirectUris: [redirect] }).then(
  ({ site, caFile }) => {
    console.log(`reference site on ${site.url} (CA: ${caFile}; users alice/alice-password and root/root-password)`);
    const stop = (): void => void site.stop().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
