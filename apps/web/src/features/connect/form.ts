import type { SystemCloudKind } from '@skyferry/contract';

export type FieldValues = Record<string, string | boolean>;

/** The object-storage kinds: their form shows the spec's three messages first. */
export const OBJECT_STORAGE_KINDS: ReadonlySet<string> = new Set([
  'amazon_s3',
  'wasabi',
  'backblaze_b2',
  's3_compatible',
]);

/** i18n keys (connect namespace) of the object-storage messages, in the order the fields are checked. */
const S3_REQUIRED: Array<[string, string]> = [
  ['bucket', 'error.bucketEmpty'],
  ['access_key_id', 'error.accessKeyEmpty'],
  ['secret_access_key', 'error.secretKeyEmpty'],
];

export interface FieldError {
  field: string;
  /** An i18n key of the connect namespace, with its values. */
  key: string;
  values?: Record<string, string>;
}

const blank = (v: string | boolean | undefined) => v === undefined || (typeof v === 'string' && v.trim() === '');

/**
 * The first problem of a connect form: for object storage "Bucket Name cannot be empty.", then
 * "Access Key ID cannot be empty.", then "Secret Access Key cannot be empty."; for every kind a
 * missing required field, a port that is not a number, an address that is not http(s).
 */
export function validateConnectForm(
  kind: Pick<SystemCloudKind, 'cloud_name' | 'fields'>,
  values: FieldValues,
): FieldError | null {
  if (OBJECT_STORAGE_KINDS.has(kind.cloud_name)) {
    for (const [field, key] of S3_REQUIRED) if (blank(values[field])) return { field, key };
  }
  for (const f of kind.fields) {
    const v = values[f.name];
    if (f.required && f.type !== 'boolean' && blank(v))
      return { field: f.name, key: 'error.required', values: { field: f.label } };
    if (blank(v) || typeof v !== 'string') continue;
    if (f.type === 'number' && !/^\d{1,5}$/.test(v.trim()))
      return { field: f.name, key: 'error.invalid', values: { field: f.label } };
    if (f.type === 'url' && !/^https?:\/\/\S+$/i.test(v.trim()))
      return { field: f.name, key: 'error.url', values: { field: f.label } };
    if (f.type === 'select' && !f.options?.some((o) => o.value === v))
      return { field: f.name, key: 'error.invalid', values: { field: f.label } };
    if (f.pattern && !new RegExp(f.pattern, 'i').test(v.trim()))
      return { field: f.name, key: 'error.invalid', values: { field: f.label } };
  }
  return null;
}

/** The value a select field shows: the one chosen, else its first option (the default). */
export function selectValue(
  field: Pick<SystemCloudKind['fields'][number], 'options'>,
  value: string | boolean | undefined,
): string {
  return typeof value === 'string' && value !== '' ? value : (field.options?.[0]?.value ?? '');
}

/**
 * The credentials the connect call sends: blanks left out, numbers as numbers, switches as
 * booleans; a select left at its default is not sent (the server's default applies).
 */
export function credentialsOf(
  kind: Pick<SystemCloudKind, 'fields'>,
  values: FieldValues,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const f of kind.fields) {
    const v = values[f.name];
    if (f.type === 'boolean') {
      if (typeof v === 'boolean') out[f.name] = v;
      continue;
    }
    if (blank(v) || typeof v !== 'string') continue;
    out[f.name] = f.type === 'number' ? Number(v.trim()) : f.secret ? v : v.trim();
  }
  return out;
}
