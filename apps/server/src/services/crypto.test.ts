import { describe, expect, it } from 'vitest';
import { DecryptionError, SecretBox, randomToken, sha256Hex } from './crypto.ts';

const SECRET = 'a-master-secret-of-at-least-32-characters!!';

describe('SecretBox', () => {
  const box = new SecretBox(SECRET);

  it('seals and opens JSON; the ciphertext names its key version and hides the text', () => {
    const sealed = box.sealJson({ secret_access_key: 'wJalrXUtnFEMI/K7MDENG', port: 22 }, 'cloud:1:credentials');
    expect(sealed.keyVersion).toBe(1);
    expect(sealed.ciphertext).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed.ciphertext).not.toContain('wJalr');
    expect(box.openJson(sealed.ciphertext, 'cloud:1:credentials', 1)).toEqual({
      secret_access_key: 'wJalrXUtnFEMI/K7MDENG',
      port: 22,
    });
  });

  it('uses a fresh IV each time', () => {
    expect(box.seal('same', 'a').ciphertext).not.toBe(box.seal('same', 'a').ciphertext);
  });

  it('refuses another record id (associated data), a tampered ciphertext, another secret and another version', () => {
    const { ciphertext } = box.seal('text', 'cloud:1:credentials');
    expect(() => box.open(ciphertext, 'cloud:2:credentials')).toThrow(DecryptionError);
    const raw = Buffer.from(ciphertext.slice(3), 'base64url');
    raw[15] = (raw[15] ?? 0) ^ 1;
    expect(() => box.open(`v1.${raw.toString('base64url')}`, 'cloud:1:credentials')).toThrow(DecryptionError);
    expect(() => new SecretBox(SECRET + 'x').open(ciphertext, 'cloud:1:credentials')).toThrow(DecryptionError);
    expect(() => box.open(ciphertext, 'cloud:1:credentials', 2)).toThrow(DecryptionError);
    expect(() => box.open(ciphertext.replace(/^v1/, 'v9'), 'cloud:1:credentials')).toThrow(/unknown key version/);
    expect(() => box.open('garbage', 'x')).toThrow(DecryptionError);
  });

  it('refuses a short master secret', () => {
    expect(() => new SecretBox('short')).toThrow();
  });

  it('MACs per purpose and verifies in constant time', () => {
    const mac = box.mac('auto-login', 'session-1');
    expect(box.verifyMac('auto-login', 'session-1', mac)).toBe(true);
    expect(box.verifyMac('auto-login', 'session-2', mac)).toBe(false);
    expect(box.verifyMac('other-purpose', 'session-1', mac)).toBe(false);
    expect(box.verifyMac('auto-login', 'session-1', mac.slice(1))).toBe(false);
  });
});

describe('tokens', () => {
  it('are prefixed, random and long; stored as SHA-256', () => {
    const a = randomToken('sk_rt_');
    expect(a).toMatch(/^sk_rt_[A-Za-z0-9_-]{43}$/);
    expect(randomToken('sk_rt_')).not.toBe(a);
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
