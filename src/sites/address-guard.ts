import dns from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Addresses no request to a site may reach, whatever else is allowed: the clouds' metadata services.

/** Cloud metadata services by name: blocked always, whatever allows private addresses. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog']);
/** Cloud metadata addresses outside the link-local ranges (AWS's IPv6 one). */
const METADATA_ADDRESSES = new Set(['fd00:ec2::254']);

/**
 * Addresses no request ever goes to, not even with --allow-private or SITE_ALLOW_PRIVATE_HOSTS:
 * link-local (169.254.0.0/16, fe80::/10), where the clouds' metadata services answer, and the
 * metadata addresses themselves (169.254.169.254, fd00:ec2::254), in any notation.
 */
export function alwaysBlockedAddress(address: string): boolean {
  const literal = address.replace(/^\[|\]$/g, '');
  if (isIP(literal) === 0) {
    return false;
  }
  let parsed = ipaddr.parse(literal);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'linkLocal' || METADATA_ADDRESSES.has(parsed.toString());
}

/** Whether `hostname` (a URL's host name) names a metadata service or an always-blocked address. */
export function alwaysBlockedHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return METADATA_HOSTS.has(host) || alwaysBlockedAddress(host);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * dns.lookup that refuses always-blocked addresses (checked after resolution, at connect time, so a
 * name that resolves to a metadata address is caught too): the lookup of the agents that otherwise
 * let private addresses through.
 */
export function guardedLookup(
  hostname: string,
  options: dns.LookupOptions,
  callback: LookupCallback,
  lookup: typeof dns.lookup = dns.lookup,
): void {
  lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) {
      callback(err, '');
      return;
    }
    const list = addresses as unknown as dns.LookupAddress[];
    const blocked = list.find((a) => alwaysBlockedAddress(a.address));
    if (blocked !== undefined) {
      callback(
        Object.assign(
          new Error(
            `DNS lookup ${blocked.address} (host: ${hostname}) is not allowed. Because, It is a link-local or metadata address.`,
          ),
          { code: 'EBLOCKED' },
        ),
        '',
      );
      return;
    }
    if (options.all === true) {
      callback(null, list);
    } else {
      callback(null, list[0]!.address, list[0]!.family);
    }
  });
}
