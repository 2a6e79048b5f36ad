import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The part of Electron's safeStorage the vault uses. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: 'basic_text' means no keyring, only an obfuscation with a fixed key. */
  getSelectedStorageBackend?(): string;
}

export class SecretUnreadableError extends Error {}

/**
 * Secrets the shell keeps (the embedded server's master secret), wrapped with Electron's
 * safeStorage: the system keychain (macOS Keychain, Windows DPAPI, the Secret Service or KWallet
 * on Linux) holds the key, and the file holds only ciphertext.
 */
export class SecretVault {
  private readonly dir: string;
  private readonly safeStorage: SafeStorageLike;

  constructor(dir: string, safeStorage: SafeStorageLike) {
    this.dir = dir;
    this.safeStorage = safeStorage;
  }

  /** Whether secrets can be wrapped by the system keychain here. */
  available(): boolean {
    if (!this.safeStorage.isEncryptionAvailable()) return false;
    return this.safeStorage.getSelectedStorageBackend?.() !== 'basic_text';
  }

  private file(name: string): string {
    return join(this.dir, `${name}.secret`);
  }

  has(name: string): boolean {
    return existsSync(this.file(name));
  }

  /**
   * The secret stored under `name`, created with `create` the first time. Undefined when the
   * keychain cannot wrap secrets (the caller then lets the server keep its own, 0600 in its data
   * folder); throws SecretUnreadableError when a stored one cannot be unwrapped any more, since a
   * new secret would make everything encrypted with the old one unreadable.
   */
  getOrCreate(name: string, create: () => string): string | undefined {
    const file = this.file(name);
    if (existsSync(file)) {
      if (!this.safeStorage.isEncryptionAvailable()) {
        throw new SecretUnreadableError(`the system keychain is not available to read ${name}`);
      }
      try {
        return this.safeStorage.decryptString(readFileSync(file));
      } catch (err) {
        throw new SecretUnreadableError(
          `${name} could not be read with the system keychain: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    if (!this.available()) return undefined;
    const secret = create();
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, this.safeStorage.encryptString(secret), { mode: 0o600 });
    return secret;
  }
}

/**
 * The embedded server's master secret: from the vault, unless the server already keeps one of its
 * own in its data folder (made while the keychain was unavailable), which must stay the one in use.
 */
export function embeddedServerSecret(vault: SecretVault, dataDir: string, create: () => string): string | undefined {
  if (!vault.has('server') && existsSync(join(dataDir, 'secret'))) return undefined;
  return vault.getOrCreate('server', create);
}
