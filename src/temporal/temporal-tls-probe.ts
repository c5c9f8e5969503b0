import tls from 'node:tls';
import type { TemporalTls } from '../config/settings.js';

const PROBE_TIMEOUT_MS = 5_000;

/**
 * One TLS handshake with the settings' certificates, to say why a connection failed: the gRPC client
 * reports a refused handshake only as "Failed to connect before the deadline". Answers a sentence
 * naming the variables to check, or undefined when TLS itself works (the cause is elsewhere).
 */
export async function probeTls(address: string, settings: TemporalTls): Promise<string | undefined> {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(colon + 1));
  const servername = settings.serverName ?? (/^[\d.]+$|:/.test(host) ? undefined : host);
  const withClientCert = settings.clientCert !== undefined;
  const outcome = await new Promise<{ error?: NodeJS.ErrnoException; closedAfterHandshake?: boolean }>((resolve) => {
    const socket = tls.connect({
      host,
      port,
      servername,
      ALPNProtocols: ['h2'],
      ...(settings.serverCa !== undefined ? { ca: settings.serverCa } : {}),
      ...(withClientCert ? { cert: settings.clientCert, key: settings.clientKey } : {}),
    });
    let handshakeDone = false;
    const finish = (result: { error?: NodeJS.ErrnoException; closedAfterHandshake?: boolean }): void => {
      socket.destroy();
      resolve(result);
    };
    // Under TLS 1.3 the server judges the client certificate after the client thinks the handshake
    // is done: wait for the server's first HTTP/2 frame (or its refusal) before calling it a success.
    socket.once('secureConnect', () => {
      handshakeDone = true;
    });
    socket.once('data', () => finish({}));
    socket.once('error', (error: NodeJS.ErrnoException) => finish({ error }));
    socket.once('close', () => finish({ closedAfterHandshake: handshakeDone }));
    socket.setTimeout(PROBE_TIMEOUT_MS, () => finish({}));
  });
  const { error } = outcome;
  if (error === undefined) {
    return outcome.closedAfterHandshake === true
      ? withClientCert
        ? 'the server closed the connection after the TLS handshake: it did not accept the client certificate ' +
          '(TEMPORAL_TLS_CERT is not issued by a CA the server trusts, or is revoked or expired)'
        : 'the server closed the connection after the TLS handshake: it most likely wants a client certificate ' +
          '(TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY)'
      : undefined;
  }
  const what = `${error.code ?? ''} ${error.message}`;
  if (/certificate required/i.test(what)) {
    return 'the server demands a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY';
  }
  if (
    /alert (unknown ca|bad certificate|certificate unknown|certificate revoked|certificate expired|access denied)/i.test(
      what,
    )
  ) {
    return `the server refused the client certificate in TEMPORAL_TLS_CERT (${error.message.split(':').slice(-2).join(':').trim()})`;
  }
  if (error.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the server's certificate is not for "${servername ?? host}": set TEMPORAL_TLS_SERVER_NAME to a name it carries (${error.message})`;
  }
  if (/CERT|VERIFY|SELF_SIGNED|ISSUER/.test(error.code ?? '')) {
    return `the server's certificate is not trusted (${error.message}): set TEMPORAL_TLS_CA to the CA that issued it`;
  }
  if (/wrong version number|packet length too long|unexpected eof|ECONNRESET/i.test(what)) {
    return 'the server does not speak TLS at TEMPORAL_ADDRESS (is it a plain-gRPC port?)';
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ETIMEDOUT/.test(error.code ?? '')) {
    return `nothing answers at TEMPORAL_ADDRESS (${error.code})`;
  }
  return `the TLS handshake failed (${error.message})`;
}
