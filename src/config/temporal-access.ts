import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { EnvReader } from './env-reader.js';

/** TLS towards the Temporal frontend. PEM bytes, read and checked once at start. */
export interface TemporalTls {
  /** The client certificate (and any intermediates) for mTLS, with its key; both or neither. */
  clientCert: Buffer | undefined;
  clientKey: Buffer | undefined;
  /** CAs trusted for the server's certificate (unset: the system's roots, as for Temporal Cloud). */
  serverCa: Buffer | undefined;
  /** The name checked in the server's certificate (and sent as SNI) instead of TEMPORAL_ADDRESS's host. */
  serverName: string | undefined;
}

export interface TemporalAccess {
  /** Undefined: plain gRPC (the dev server `npm start` runs). */
  temporalTls: TemporalTls | undefined;
  /** Temporal Cloud API key, sent as `authorization: Bearer <key>`; secret. */
  temporalApiKey: string | undefined;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * TEMPORAL_TLS, TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME and
 * TEMPORAL_API_KEY. The PEM settings take a file path or the PEM itself (a platform that hands
 * secrets over as environment values). Problems name their variable and never quote a key.
 */
export function readTemporalAccess(
  reader: EnvReader,
  problems: string[],
  temporalAddress: string | undefined,
): TemporalAccess {
  const certRaw = reader.str('TEMPORAL_TLS_CERT');
  const keyRaw = reader.str('TEMPORAL_TLS_KEY');
  const caRaw = reader.str('TEMPORAL_TLS_CA');
  const serverName = reader.str('TEMPORAL_TLS_SERVER_NAME');
  const apiKey = reader.str('TEMPORAL_API_KEY');
  const tlsFlag = reader.str('TEMPORAL_TLS') === undefined ? undefined : reader.bool('TEMPORAL_TLS', false);

  const given = [
    ['TEMPORAL_TLS_CERT', certRaw],
    ['TEMPORAL_TLS_KEY', keyRaw],
    ['TEMPORAL_TLS_CA', caRaw],
    ['TEMPORAL_TLS_SERVER_NAME', serverName],
    ['TEMPORAL_API_KEY', apiKey],
  ]
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name!);
  if (tlsFlag === true) {
    given.unshift('TEMPORAL_TLS');
  }
  if (given.length > 0 && temporalAddress === undefined) {
    problems.push(
      `${given.join(', ')} ${given.length === 1 ? 'needs' : 'need'} TEMPORAL_ADDRESS: they are for an external ` +
        'Temporal (a cluster or Temporal Cloud); the dev server that npm start runs speaks plain gRPC',
    );
  }
  if (tlsFlag === false && given.length > 0) {
    // An API key or a client key sent without TLS would travel in clear.
    problems.push(
      `TEMPORAL_TLS=false contradicts ${given.join(', ')}, which ${given.length === 1 ? 'needs' : 'need'} TLS`,
    );
  }
  if (certRaw !== undefined && keyRaw === undefined) {
    problems.push('TEMPORAL_TLS_CERT is set without TEMPORAL_TLS_KEY: mTLS needs the client certificate and its key');
  }
  if (keyRaw !== undefined && certRaw === undefined) {
    problems.push('TEMPORAL_TLS_KEY is set without TEMPORAL_TLS_CERT: mTLS needs the client certificate and its key');
  }
  if (serverName !== undefined && !HOST_NAME.test(serverName)) {
    problems.push(`TEMPORAL_TLS_SERVER_NAME must be a host name, got "${serverName}"`);
  }
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) {
    // It becomes an HTTP/2 header value; say what is wrong without quoting it.
    problems.push('TEMPORAL_API_KEY must be one word of printable ASCII characters (no spaces or line breaks)');
  }

  const clientCert = certRaw === undefined ? undefined : readPem('TEMPORAL_TLS_CERT', certRaw, problems, true);
  const clientKey = keyRaw === undefined ? undefined : readPem('TEMPORAL_TLS_KEY', keyRaw, problems, false);
  const serverCa = caRaw === undefined ? undefined : readPem('TEMPORAL_TLS_CA', caRaw, problems, true);
  const leaf = clientCert === undefined ? undefined : certificates('TEMPORAL_TLS_CERT', clientCert, problems)[0];
  const key = clientKey === undefined ? undefined : privateKey(clientKey, problems);
  if (serverCa !== undefined) {
    certificates('TEMPORAL_TLS_CA', serverCa, problems);
  }
  if (leaf !== undefined && key !== undefined) {
    if (!leaf.checkPrivateKey(key)) {
      problems.push('TEMPORAL_TLS_KEY is not the private key of the certificate in TEMPORAL_TLS_CERT');
    }
    if (new Date(leaf.validTo).getTime() < Date.now()) {
      problems.push(`TEMPORAL_TLS_CERT expired on ${new Date(leaf.validTo).toISOString()}: the server will refuse it`);
    }
  }

  const tls = tlsFlag ?? given.length > 0;
  return {
    temporalTls: tls ? { clientCert, clientKey, serverCa, serverName } : undefined,
    temporalApiKey: apiKey,
  };
}

/**
 * The PEM itself (a value starting with -----BEGIN, where `\n` may stand for line breaks) or the
 * contents of the file it names. The key's value is never quoted in a problem: it may be the key.
 */
function readPem(name: string, raw: string, problems: string[], quotable: boolean): Buffer | undefined {
  if (raw.startsWith('-----BEGIN ')) {
    return Buffer.from(raw.includes('\n') ? raw : raw.replace(/\\n/g, '\n'));
  }
  try {
    return readFileSync(raw);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    problems.push(
      `${name} names a file that cannot be read (${code})${quotable ? `: ${raw}` : ''}; give the path of a PEM file or the PEM itself`,
    );
    return undefined;
  }
}

function certificates(name: string, pem: Buffer, problems: string[]): X509Certificate[] {
  const blocks = pem.toString('utf8').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    problems.push(`${name} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return [];
  }
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    problems.push(`${name} holds a malformed PEM certificate`);
    return [];
  }
}

function privateKey(pem: Buffer, problems: string[]): KeyObject | undefined {
  if (!/-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/.test(pem.toString('utf8'))) {
    problems.push('TEMPORAL_TLS_KEY holds no PEM private key (-----BEGIN PRIVATE KEY-----)');
    return undefined;
  }
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    // Encrypted keys land here too: the processes have no passphrase to give.
    problems.push('TEMPORAL_TLS_KEY holds a malformed or passphrase-protected PEM private key');
    return undefined;
  }
}
