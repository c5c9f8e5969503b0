import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Default HOST: loopback only; a container or a host behind its own proxy sets HOST=0.0.0.0 (or `::`). */
export const DEFAULT_HOST = '127.0.0.1';

/** `HOST`: an IPv4 or IPv6 address to listen on, or `localhost`; names other than that are refused. */
export function parseHost(raw: string | undefined, problems: string[]): string {
  if (raw === undefined) {
    return DEFAULT_HOST;
  }
  if (raw.toLowerCase() === 'localhost' || isIP(raw) !== 0) {
    return raw;
  }
  problems.push(`HOST must be an IP address to listen on (127.0.0.1, 0.0.0.0, ::1, ::) or localhost, got "${raw}"`);
  return DEFAULT_HOST;
}

/** Whether listening on this address serves this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') {
    return true;
  }
  try {
    const address = ipaddr.process(host);
    return address.range() === 'loopback';
  } catch {
    return false;
  }
}
