import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SecretUnreadableError, SecretVault, embeddedServerSecret, type SafeStorageLike } from './secrets.ts';
import { tempDirs } from './test-support.ts';

// A stand-in for the system keychain: reversible, and visibly not the plain text.
function keychain(options: { available?: boolean; backend?: string; broken?: boolean } = {}): SafeStorageLike {
  return {
    isEncryptionAvailable: () => options.available ?? true,
    encryptString: (plain) => Buffer.from(`v10${Buffer.from(plain).reverse().toString('base64')}`),
    decryptString: (data) => {
      if (options.broken)
        throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
      return Buffer.from(data.toString().slice(3), 'base64').reverse().toString();
    },
    ...(options.backend ? { getSelectedStorageBackend: () => options.backend! } : {}),
  };
}

const temp = tempDirs('sf-vault-');

describe('secrets wrapped with safeStorage', () => {
  it('creates a secret once, stores only what the keychain wrapped, and reads it back', () => {
    const dir = temp();
    const vault = new SecretVault(dir, keychain());
    const first = vault.getOrCreate('server', () => 'the-master-secret-of-this-install-0123456789');
    expect(first).toBe('the-master-secret-of-this-install-0123456789');
    const stored = readFileSync(join(dir, 'server.secret'));
    expect(stored.toString()).not.toContain('the-master-secret');
    expect(new SecretVault(dir, keychain()).getOrCreate('server', () => 'another')).toBe(first);
  });

  it('keeps no secret where the keychain cannot wrap it (no keyring on Linux)', () => {
    expect(new SecretVault(temp(), keychain({ available: false })).getOrCreate('server', () => 'x')).toBeUndefined();
    expect(
      new SecretVault(temp(), keychain({ backend: 'basic_text' })).getOrCreate('server', () => 'x'),
    ).toBeUndefined();
    expect(new SecretVault(temp(), keychain({ backend: 'gnome_libsecret' })).getOrCreate('server', () => 'x')).toBe(
      'x',
    );
  });

  it('refuses to replace a stored secret it can no longer unwrap', () => {
    const dir = temp();
    new SecretVault(dir, keychain()).getOrCreate('server', () => 'old-secret');
    expect(() => new SecretVault(dir, keychain({ broken: true })).getOrCreate('server', () => 'new')).toThrow(
      SecretUnreadableError,
    );
    expect(() => new SecretVault(dir, keychain({ available: false })).getOrCreate('server', () => 'new')).toThrow(
      SecretUnreadableError,
    );
  });

  it('leaves the embedded server the secret it already keeps in its data folder', () => {
    const data = temp();
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'secret'), 'x'.repeat(43));
    const vault = new SecretVault(temp(), keychain());
    expect(embeddedServerSecret(vault, data, () => 'new')).toBeUndefined();
    const fresh = temp();
    expect(embeddedServerSecret(vault, fresh, () => 'new-secret')).toBe('new-secret');
    // Once the vault holds it, it is the one in use.
    expect(embeddedServerSecret(vault, data, () => 'other')).toBe('new-secret');
  });
});
