import { describe, expect, it } from 'vitest';
import { addressKey } from './accounts.ts';

describe('addressKey (what a per-address sign-in limit counts)', () => {
  it('counts an IPv4 address as itself, also when IPv4-mapped', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::FFFF:198.51.100.1')).toBe('198.51.100.1');
  });

  it('counts every address of one IPv6 /64 as one', () => {
    const key = addressKey('2001:db8:1:2::a');
    expect(key).toBe('2001:db8:1:2::/64');
    for (const ip of ['2001:db8:1:2::b', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:DB8:1:2:3:4:5:6']) {
      expect(addressKey(ip)).toBe(key);
    }
  });

  it('keeps different /64 networks apart, wherever the :: falls', () => {
    expect(addressKey('2001:db8:1:3::a')).toBe('2001:db8:1:3::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('2001:db8:1:2:3::')).toBe('2001:db8:1:2::/64');
  });

  it('leaves anything else as it is', () => {
    expect(addressKey('unknown')).toBe('unknown');
  });
});
