import { isIPv4, isIPv6 } from 'node:net';

/** IPv4-mapped IPv6 (`::ffff:192.0.2.1`, or as hex `::ffff:c000:201`): the IPv4 client behind it. */
const MAPPED_DOTTED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/**
 * The key a per-address limit counts a client under: an IPv4 address as it is, an IPv6 address by
 * its /64 (one host usually holds a whole /64, so counting single addresses would give it 2^64
 * counters), an IPv4-mapped IPv6 address as its IPv4 address. Anything else (no address) as it is.
 */
export function addressKey(ip: string | undefined): string {
  if (ip === undefined || ip === '') {
    return 'unknown';
  }
  const address = ip.split('%')[0]!; // a zone id (fe80::1%eth0) names an interface, not a client
  if (isIPv4(address) || !isIPv6(address)) {
    return address;
  }
  const dotted = MAPPED_DOTTED.exec(address)?.[1];
  if (dotted !== undefined && isIPv4(dotted)) {
    return dotted;
  }
  const hex = MAPPED_HEX.exec(address);
  if (hex !== null) {
    const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, lower-case without leading zeros. */
function ipv6Groups(address: string): string[] {
  let text = address.toLowerCase();
  // A trailing dotted quad (::1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16).toString(16));
}
