import type { CloudKindInfo } from './clouds.ts';
import type { MessageKey } from './i18n/index.ts';

export type CredentialValue = string | number | boolean;
export type Credentials = Record<string, CredentialValue>;

/** A credential that does not pass: its message (key and parameters), the field and whether it is missing. */
export class CredentialsError extends Error {
  override readonly name = 'CredentialsError';
  readonly key: MessageKey;
  readonly params: Record<string, string>;
  /** The field's name (not its label). */
  readonly field: string;
  readonly missing: boolean;
  constructor(key: MessageKey, params: Record<string, string>, field: string, missing: boolean) {
    super(key);
    this.key = key;
    this.params = params;
    this.field = field;
    this.missing = missing;
  }
}

/** Kinds whose form is checked in the spec's object-storage order (bucket, access key, secret key). */
export const OBJECT_STORAGE_KINDS: ReadonlySet<string> = new Set([
  'amazon_s3',
  'wasabi',
  'backblaze_b2',
  's3_compatible',
]);

/**
 * Checks and normalises form credentials against the kind's fields: the object-storage messages
 * first, then required fields, types, and URL shapes. Unknown fields are dropped. Throws a
 * CredentialsError naming the first problem. The server's Add cloud call and the command line's
 * remotes file both go through it.
 */
export function checkCredentials(info: CloudKindInfo, raw: Record<string, unknown>): Credentials {
  const present = (name: string) => {
    const v = raw[name];
    return v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
  };
  if (OBJECT_STORAGE_KINDS.has(info.kind)) {
    if (!present('bucket')) throw new CredentialsError('bucket_empty', {}, 'bucket', true);
    if (!present('access_key_id')) throw new CredentialsError('access_key_empty', {}, 'access_key_id', true);
    if (!present('secret_access_key')) throw new CredentialsError('secret_key_empty', {}, 'secret_access_key', true);
  }
  const out: Credentials = {};
  for (const field of info.fields) {
    if (!present(field.name)) {
      if (field.required) throw new CredentialsError('field_required', { field: field.label }, field.name, true);
      continue;
    }
    const value = raw[field.name];
    const invalid = () => new CredentialsError('field_invalid', { field: field.label }, field.name, false);
    switch (field.type) {
      case 'number': {
        const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
        if (!Number.isInteger(n) || n < 1 || n > 65_535) throw invalid();
        out[field.name] = n;
        break;
      }
      case 'boolean': {
        if (typeof value === 'boolean') out[field.name] = value;
        else if (value === 'true' || value === '1' || value === 1) out[field.name] = true;
        else if (value === 'false' || value === '0' || value === 0) out[field.name] = false;
        else throw invalid();
        break;
      }
      case 'url': {
        if (typeof value !== 'string') throw invalid();
        const text = value.trim();
        let url: URL;
        try {
          url = new URL(text);
        } catch {
          throw invalid();
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid();
        out[field.name] = text;
        break;
      }
      case 'select': {
        const text = typeof value === 'string' ? value.trim() : undefined;
        if (text === undefined || !field.options?.some((o) => o.value === text)) throw invalid();
        out[field.name] = text;
        break;
      }
      default: {
        if (typeof value !== 'string' && typeof value !== 'number') throw invalid();
        // Secrets are kept byte for byte; other text is trimmed.
        out[field.name] = field.secret ? String(value) : String(value).trim();
        if (field.pattern && !new RegExp(field.pattern, 'i').test(String(out[field.name]))) throw invalid();
      }
    }
  }
  return out;
}
