import { ALL_CLOUD_FLAGS, CloudFlag, Permission, READ_ONLY_CLOUD_FLAGS } from './flags.ts';

/** Cloud kind identifiers (`cloud_name`). */
export const CLOUD_KINDS = [
  'google_drive',
  'google_drive_shared',
  'onedrive',
  'onedrive_business',
  'dropbox',
  'dropbox_business',
  'box',
  'google_photos',
  'amazon_s3',
  'wasabi',
  'backblaze_b2',
  's3_compatible',
  'webdav',
  'sftp',
  'ftp',
  'local',
] as const;
export type CloudKind = (typeof CLOUD_KINDS)[number];

export type CredentialFieldType = 'text' | 'password' | 'number' | 'boolean' | 'url' | 'textarea' | 'select';
/** One choice of a `select` field. */
export interface CredentialFieldOption {
  value: string;
  label: string;
}
export interface CredentialField {
  name: string;
  label: string;
  type: CredentialFieldType;
  required: boolean;
  secret: boolean;
  /** A sentence shown under the field: what it is for, or why it is unsafe. */
  hint?: string;
  /** `select` fields: the values offered, the first being the default. */
  options?: CredentialFieldOption[];
  /** Text fields: a regular expression (case-insensitive, whole value) a value must match. */
  pattern?: string;
}

export type AuthMethod = 'oauth' | 'form';

export interface CloudKindInfo {
  kind: CloudKind;
  displayName: string;
  auth: AuthMethod;
  /** Capability and permission bits (spec section 3) of what Skyferry's adapter supports. */
  flags: number;
  /** A photos-type cloud (opens the photos view; takes pictures and videos only). */
  photos: boolean;
  /** The "Shared with me" variant. */
  shared: boolean;
  /** Which OAuth client configures this kind (google, microsoft, dropbox, box). */
  oauthProvider?: 'google' | 'microsoft' | 'dropbox' | 'box';
  fields: readonly CredentialField[];
}

const f = (
  name: string,
  label: string,
  type: CredentialFieldType,
  required: boolean,
  secret = false,
  extra: Pick<CredentialField, 'hint' | 'options' | 'pattern'> = {},
): CredentialField => ({
  name,
  label,
  type,
  required,
  secret,
  ...extra,
});

/** A SHA-256 certificate fingerprint: 32 hex bytes, with or without colons, optionally "sha256:" first. */
export const SHA256_FINGERPRINT_PATTERN = '^(sha256:)?([0-9a-f]{2}:?){31}[0-9a-f]{2}$';

/** Optional settings several protocol kinds share. */
const ROOT_FIELD = f('root', 'Remote folder', 'text', false, false, {
  hint: "The server folder shown as the top of this cloud drive (default: the login's start folder).",
});
const INSECURE_FIELD = f('insecure_skip_verify', 'Accept any TLS certificate (unsafe)', 'boolean', false, false, {
  hint: 'Skips checking who the server is: anyone on the way could read the password and the files. For testing only.',
});

const S3_FIELDS = (withEndpoint: boolean): CredentialField[] => [
  f('bucket', 'Bucket Name', 'text', true),
  f('access_key_id', 'Access Key ID', 'text', true),
  f('secret_access_key', 'Secret Access Key', 'password', true, true),
  f('endpoint', 'Endpoint', 'url', withEndpoint),
  f('region', 'Region', 'text', false),
  f('path_style', 'Path-style addressing', 'boolean', false),
];

export const CLOUD_KIND_INFO: Record<CloudKind, CloudKindInfo> = {
  google_drive: {
    kind: 'google_drive',
    displayName: 'Google Drive',
    auth: 'oauth',
    oauthProvider: 'google',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [],
  },
  google_drive_shared: {
    kind: 'google_drive_shared',
    displayName: 'Google Drive (Shared with me)',
    auth: 'oauth',
    oauthProvider: 'google',
    flags: READ_ONLY_CLOUD_FLAGS,
    photos: false,
    shared: true,
    fields: [],
  },
  onedrive: {
    kind: 'onedrive',
    displayName: 'OneDrive',
    auth: 'oauth',
    oauthProvider: 'microsoft',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [],
  },
  onedrive_business: {
    kind: 'onedrive_business',
    displayName: 'OneDrive for Business',
    auth: 'oauth',
    oauthProvider: 'microsoft',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [],
  },
  dropbox: {
    kind: 'dropbox',
    displayName: 'Dropbox',
    auth: 'oauth',
    oauthProvider: 'dropbox',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [],
  },
  dropbox_business: {
    kind: 'dropbox_business',
    displayName: 'Dropbox Business',
    auth: 'oauth',
    oauthProvider: 'dropbox',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [],
  },
  box: {
    kind: 'box',
    displayName: 'Box',
    auth: 'oauth',
    oauthProvider: 'box',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [],
  },
  google_photos: {
    kind: 'google_photos',
    displayName: 'Google Photos',
    auth: 'oauth',
    oauthProvider: 'google',
    // No usage detail, no slim (spec section 3); no delete or rename through its API.
    flags: Permission.read | Permission.write | Permission.mkdir | CloudFlag.transferIn,
    photos: true,
    shared: false,
    fields: [],
  },
  amazon_s3: {
    kind: 'amazon_s3',
    displayName: 'Amazon S3',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: S3_FIELDS(false),
  },
  wasabi: {
    kind: 'wasabi',
    displayName: 'Wasabi',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: S3_FIELDS(false),
  },
  backblaze_b2: {
    kind: 'backblaze_b2',
    displayName: 'Backblaze B2',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: S3_FIELDS(false),
  },
  s3_compatible: {
    kind: 's3_compatible',
    displayName: 'S3-compatible storage',
    auth: 'form',
    // The last object-storage kind has no usage detail (spec section 3).
    flags: ALL_CLOUD_FLAGS & ~CloudFlag.usingDetail,
    photos: false,
    shared: false,
    fields: S3_FIELDS(true),
  },
  webdav: {
    kind: 'webdav',
    displayName: 'WebDAV',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [
      f('url', 'Server URL', 'url', true),
      f('username', 'Username', 'text', false),
      f('password', 'Password', 'password', false, true),
      f('vendor', 'Server type', 'select', false, false, {
        hint: 'Nextcloud and ownCloud get their faster uploads and checksums; detected from the address by default.',
        options: [
          { value: 'auto', label: 'Detect automatically' },
          { value: 'nextcloud', label: 'Nextcloud' },
          { value: 'owncloud', label: 'ownCloud' },
          { value: 'other', label: 'Other WebDAV server' },
        ],
      }),
      INSECURE_FIELD,
    ],
  },
  sftp: {
    kind: 'sftp',
    displayName: 'SFTP',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [
      f('host', 'Host', 'text', true),
      f('port', 'Port', 'number', false),
      f('username', 'Username', 'text', true),
      f('password', 'Password', 'password', false, true),
      f('private_key', 'Private key', 'textarea', false, true),
      f('passphrase', 'Key passphrase', 'password', false, true),
      ROOT_FIELD,
    ],
  },
  ftp: {
    kind: 'ftp',
    displayName: 'FTP / FTPS',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [
      f('host', 'Host', 'text', true),
      f('port', 'Port', 'number', false),
      f('username', 'Username', 'text', true),
      f('password', 'Password', 'password', true, true),
      f('secure', 'Use TLS (FTPS)', 'boolean', false),
      f('tls_fingerprint', 'Certificate fingerprint (SHA-256)', 'text', false, false, {
        hint: 'Trusts a self-signed certificate: its SHA-256 fingerprint, as "openssl x509 -noout -fingerprint -sha256" prints it.',
        pattern: SHA256_FINGERPRINT_PATTERN,
      }),
      INSECURE_FIELD,
      ROOT_FIELD,
    ],
  },
  local: {
    kind: 'local',
    displayName: 'Local folder',
    auth: 'form',
    flags: ALL_CLOUD_FLAGS,
    photos: false,
    shared: false,
    fields: [f('path', 'Folder path', 'text', true)],
  },
};

/** Capability flags of a kind; an unknown kind gets none. */
export function cloudFlagsOf(kind: string): number {
  return (CLOUD_KIND_INFO as Record<string, CloudKindInfo | undefined>)[kind]?.flags ?? Permission.none;
}

export function isCloudKind(kind: string): kind is CloudKind {
  return (CLOUD_KINDS as readonly string[]).includes(kind);
}
