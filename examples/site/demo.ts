import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ReferenceSite } from './site.js';
import { createTestCa, issueServerCert, type TestCa } from './tls.js';

export interface DemoSite {
  site: ReferenceSite;
  /** PEM file of the CA that signed the site's certificate (give it to curl with --cacert). */
  caFile: string;
}

/** Loads the demo CA kept in `dir`, or creates it once (so `curl --cacert` keeps working across restarts). */
async function loadOrCreateCa(dir: string): Promise<{ ca: TestCa; caFile: string }> {
  mkdirSync(dir, { recursive: true });
  const caFile = path.join(dir, 'ca.pem');
  const keyFile = path.join(dir, 'ca-key.pem');
  if (existsSync(caFile) && existsSync(keyFile)) {
    return { ca: { cert: readFileSync(caFile, 'utf8'), key: readFileSync(keyFile, 'utf8') }, caFile };
  }
  const ca = await createTestCa('agentsite demo site CA');
  writeFileSync(keyFile, ca.key, { mode: 0o600 });
  writeFileSync(caFile, ca.cert);
  return { ca, caFile };
}

/** Starts the reference site on https://localhost:<port> with a CA kept in `dir`. */
export async function startDemoSite(options: { dir: string; port: number; redirectUris: string[] }): Promise<DemoSite> {
  const { ca, caFile } = await loadOrCreateCa(options.dir);
  const tls = await issueServerCert(ca, ['localhost', '127.0.0.1']);
  const site = await ReferenceSite.start({ tls, port: options.port, host: '127.0.0.1', publicHost: 'localhost' });
  for (const uri of options.redirectUris) {
    site.allowRedirect('agentsite', uri);
  }
  return { site, caFile };
}
