/**
 * rclone's "obscured" passwords (`rclone obscure`, rclone.conf's `pass` and the like): not
 * encryption, a documented reversible scrambling. The text is unpadded base64url of a 16-byte
 * initialisation vector followed by the password under AES-256-CTR with a key rclone publishes in
 * its source (fs/config/obscure).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const KEY = Buffer.from('9c935b48730a554d6bfd7c63c886a92bd390198eb8128afbf4de162b8b95f638', 'hex');
const IV_BYTES = 16;

export class RevealError extends Error {
  override readonly name = 'RevealError';
}

/** The clear text of an obscured value; throws RevealError on a value rclone could not have made. */
export function reveal(obscured: string): string {
  const text = obscured.trim();
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new RevealError('not base64url');
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length < IV_BYTES) throw new RevealError('too short');
  const decipher = createDecipheriv('aes-256-ctr', KEY, bytes.subarray(0, IV_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES)), decipher.final()]).toString('utf8');
}

/** Obscures as `rclone obscure` does (a fresh random vector each time). */
export function obscure(clear: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-ctr', KEY, iv);
  return Buffer.concat([iv, cipher.update(clear, 'utf8'), cipher.final()]).toString('base64url');
}
