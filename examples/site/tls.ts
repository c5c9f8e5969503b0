import selfsigned from 'selfsigned';

export interface TestCa {
  /** PEM of the CA certificate: what a client must trust. */
  cert: string;
  key: string;
}

export interface ServerCert {
  cert: string;
  key: string;
}

const DAY_MS = 86_400_000;

/** A throwaway certificate authority for local HTTPS (generated at run time; no key is ever committed). */
export async function createTestCa(commonName = 'agentsite reference site test CA'): Promise<TestCa> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 30 * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A server certificate for `hosts` (DNS names or IP addresses), signed by the test CA. */
export async function issueServerCert(
  ca: TestCa,
  hosts: string[] = ['localhost', '127.0.0.1', '::1'],
): Promise<ServerCert> {
  const altNames = hosts.map((host) =>
    /^[\d.]+$/.test(host) || host.includes(':') ? { type: 7 as const, ip: host } : { type: 2 as const, value: host },
  );
  return issueLeafCert(ca, hosts[0] ?? 'localhost', [
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
}

/** A client certificate (mTLS) for `commonName`, signed by the test CA. */
export function issueClientCert(ca: TestCa, commonName: string): Promise<ServerCert> {
  return issueLeafCert(ca, commonName, [{ name: 'extKeyUsage', clientAuth: true }]);
}

/** A certificate extension as selfsigned takes it (its types do not export the name). */
type Extension = NonNullable<NonNullable<Parameters<typeof selfsigned.generate>[1]>['extensions']>[number];

async function issueLeafCert(ca: TestCa, commonName: string, extensions: Extension[]): Promise<ServerCert> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 30 * DAY_MS),
    ca: { key: ca.key, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      ...extensions,
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
