import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** The key version new ciphertexts are sealed with; older versions stay readable while listed. */
export const CURRENT_KEY_VERSION = 1;

const SALT = 'skyferry/v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function derive(secret: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from(SALT), Buffer.from(info), 32));
}

export class DecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecryptionError';
  }
}

export interface Sealed {
  /** `v<version>.<base64url(iv | ciphertext | tag)>` */
  ciphertext: string;
  keyVersion: number;
}

/**
 * Encryption at rest for cloud credentials and backend state: AES-256-GCM under a key derived from
 * the master secret with HKDF-SHA256, a random 96-bit IV per message, and the record id as
 * associated data (a ciphertext copied onto another row does not open). Also derives the HMAC keys
 * of signed tokens, so every key comes from SKYFERRY_SECRET and none is stored.
 */
export class SecretBox {
  private readonly keys: Map<number, Buffer>;
  private readonly secret: string;

  constructor(secret: string) {
    if (secret.length < 32) throw new Error('the master secret must have at least 32 characters');
    this.secret = secret;
    this.keys = new Map([[CURRENT_KEY_VERSION, derive(secret, `credentials:v${CURRENT_KEY_VERSION}`)]]);
  }

  seal(plaintext: string, aad: string): Sealed {
    const key = this.keys.get(CURRENT_KEY_VERSION);
    if (!key) throw new Error('no current key');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const packed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    return { ciphertext: `v${CURRENT_KEY_VERSION}.${packed}`, keyVersion: CURRENT_KEY_VERSION };
  }

  open(sealed: string, aad: string, keyVersion?: number): string {
    const m = /^v(\d+)\.([A-Za-z0-9_-]+)$/.exec(sealed);
    if (!m) throw new DecryptionError('malformed ciphertext');
    const version = Number(m[1]);
    if (keyVersion !== undefined && keyVersion !== version) throw new DecryptionError('key version mismatch');
    const key = this.keys.get(version);
    if (!key) throw new DecryptionError(`unknown key version ${version}`);
    const raw = Buffer.from(m[2] ?? '', 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new DecryptionError('ciphertext too short');
    const iv = raw.subarray(0, IV_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    const body = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new DecryptionError('ciphertext does not authenticate');
    }
  }

  sealJson(value: unknown, aad: string): Sealed {
    return this.seal(JSON.stringify(value), aad);
  }

  openJson<T>(sealed: string, aad: string, keyVersion?: number): T {
    return JSON.parse(this.open(sealed, aad, keyVersion)) as T;
  }

  /** A keyed MAC (base64url) for signed tokens; each purpose gets its own derived key. */
  mac(purpose: string, data: string): string {
    return createHmac('sha256', derive(this.secret, `mac:${purpose}`))
      .update(data)
      .digest('base64url');
  }

  verifyMac(purpose: string, data: string, mac: string): boolean {
    const expected = Buffer.from(this.mac(purpose, data));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** SHA-256 hex: how tokens are stored (a database dump does not yield working tokens). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** An opaque random token with a recognisable prefix (scanners and log redaction can spot it). */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** A random id for rows (22 characters, URL-safe). */
export function newId(): string {
  return randomBytes(16).toString('base64url');
}
