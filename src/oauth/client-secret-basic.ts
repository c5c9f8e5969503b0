import type * as oidc from 'openid-client';

/**
 * A value as the WHATWG application/x-www-form-urlencoded serializer writes it (URLSearchParams):
 * A-Za-z0-9 and `*-._` as they are, a space as `+`, everything else percent-encoded. RFC 6749 §2.3.1
 * asks for form-encoding before Basic; openid-client's own encoder also escapes `-`, `.`, `_`, `!`,
 * `~`, `*`, `'`, `(` and `)`, which a server that does not decode (some do not) reads as another id.
 * This one leaves the usual characters of ids and secrets as they are: a decoding server reads the
 * same, a non-decoding one reads them right.
 */
export function formEncode(value: string): string {
  return new URLSearchParams([['v', value]]).toString().slice('v='.length);
}

/** `client_secret_basic` (RFC 6749 §2.3.1) with the WHATWG form encoding of the id and the secret. */
export function clientSecretBasic(clientSecret: string): oidc.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${formEncode(client.client_id)}:${formEncode(clientSecret)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`);
  };
}
