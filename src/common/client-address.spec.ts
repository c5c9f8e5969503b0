import { describe, expect, it } from '@jest/globals';
import { addressKey } from './client-address.js';

describe('addressKey', () => {
  it('keeps IPv4 addresses as they are', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1');
  });

  it('counts an IPv6 address by its /64, whatever its spelling', () => {
    const key = '2001:db8:1:2::/64';
    for (const address of [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0DB8:0001:0002:0000:0000:0000:0009',
      '2001:db8:1:2:a:b:c:d',
      '2001:db8:1:2::7%eth0',
      '2001:db8:1:2::1.2.3.4',
    ]) {
      expect(addressKey(address)).toBe(key);
    }
    expect(addressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%lo0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('2001:db8::')).toBe('2001:db8:0:0::/64');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::FFFF:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:cb00:7109')).toBe('203.0.113.9');
  });

  it('keeps what is no address as it is, and names a missing one', () => {
    expect(addressKey(undefined)).toBe('unknown');
    expect(addressKey('')).toBe('unknown');
    expect(addressKey('not-an-address')).toBe('not-an-address');
  });
});
