/**
 * rclone.conf to Skyferry remotes: each remote whose backend Skyferry has becomes a remote of the
 * same name with the web app's fields (obscured passwords revealed); the others are reported with
 * the reason they were left out. Pure: the caller reads the files (SFTP keys) and writes the result.
 */
import { CLOUD_KIND_INFO, type CloudKind } from '@skyferry/contract';
import { reveal, RevealError } from './reveal.ts';

/** One `[name]` section of rclone.conf, its keys as written. */
export interface RcloneSection {
  name: string;
  options: Record<string, string>;
}

export interface ImportedRemote {
  name: string;
  /** rclone's backend type. */
  type: string;
  kind: CloudKind;
  credentials: Record<string, unknown>;
  /** What the user should know about the converted remote. */
  notes: string[];
}

export interface SkippedRemote {
  name: string;
  type: string;
  reason: string;
}

export interface Conversion {
  imported: ImportedRemote[];
  skipped: SkippedRemote[];
}

export class RcloneConfigError extends Error {
  override readonly name = 'RcloneConfigError';
}

/**
 * Reads rclone.conf's INI form: `[name]` sections of `key = value` lines, `#` and `;` comments.
 * An encrypted file (`rclone config` with a configuration password) is refused.
 */
export function parseRcloneConfig(text: string): RcloneSection[] {
  if (/^RCLONE_ENCRYPT_V\d+:/m.test(text)) {
    throw new RcloneConfigError(
      'this rclone configuration is encrypted with a password; decrypt it first (rclone config show > plain.conf, then import plain.conf and delete it)',
    );
  }
  const sections: RcloneSection[] = [];
  let current: RcloneSection | undefined;
  for (const [i, raw] of text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.*)\]$/.exec(line);
    if (header) {
      current = { name: (header[1] as string).trim(), options: {} };
      sections.push(current);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0 || !current) throw new RcloneConfigError(`line ${i + 1} is neither a [remote] nor key = value`);
    current.options[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return sections;
}

/** What a conversion needs from outside: the user's login name, and a key file's text. */
export interface ConvertEnv {
  username: string;
  readKeyFile: (path: string) => string;
}

class Skip extends Error {}

const REMOTE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]+$/;

const S3_PROVIDER_KIND: Record<string, CloudKind> = { AWS: 'amazon_s3', Wasabi: 'wasabi' };

const OAUTH_TYPES: Record<string, CloudKind> = {
  drive: 'google_drive',
  onedrive: 'onedrive',
  dropbox: 'dropbox',
  box: 'box',
  'google photos': 'google_photos',
  googlephotos: 'google_photos',
};

const WEBDAV_VENDORS: Record<string, string> = { nextcloud: 'nextcloud', owncloud: 'owncloud', other: 'other' };

const isTrue = (v: string | undefined) => v === 'true' || v === '1';

function revealed(o: Record<string, string>, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === '') return undefined;
  try {
    return reveal(v);
  } catch (err) {
    if (err instanceof RevealError) throw new Skip(`its ${key} is not an obscured password (${err.message})`);
    throw err;
  }
}

function withScheme(endpoint: string): string {
  return /^https?:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`;
}

function s3(o: Record<string, string>, notes: string[]): { kind: CloudKind; credentials: Record<string, unknown> } {
  const provider = o.provider || 'AWS';
  const kind = S3_PROVIDER_KIND[provider] ?? 's3_compatible';
  const credentials: Record<string, unknown> = {};
  if (o.access_key_id && o.secret_access_key) {
    credentials.access_key_id = o.access_key_id;
    credentials.secret_access_key = o.secret_access_key;
  } else if (isTrue(o.env_auth)) {
    // rclone's env_auth reads the standard variables at each run; so does the remote.
    credentials.access_key_id = { env: 'AWS_ACCESS_KEY_ID' };
    credentials.secret_access_key = { env: 'AWS_SECRET_ACCESS_KEY' };
    notes.push('keys read from $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY at each run (env_auth)');
  } else {
    throw new Skip('it has no access_key_id and secret_access_key (anonymous access is not supported)');
  }
  const region = o.region || o.location_constraint;
  if (region && region !== 'other-v2-signature') credentials.region = region;
  if (o.endpoint) credentials.endpoint = withScheme(o.endpoint);
  else if (kind === 's3_compatible') throw new Skip(`its provider ${provider} needs an endpoint, and it names none`);
  // rclone addresses buckets by path unless told otherwise (and AWS by virtual host).
  if (kind === 's3_compatible') credentials.path_style = o.force_path_style !== 'false';
  else if (o.force_path_style === 'true') credentials.path_style = true;
  notes.push('the bucket is the first folder of each path, as with rclone (name:bucket/folder)');
  return { kind, credentials };
}

function webdav(o: Record<string, string>, notes: string[]): Record<string, unknown> {
  if (!o.url) throw new Skip('it has no url');
  if (o.bearer_token || o.bearer_token_command)
    throw new Skip('it signs in with a bearer token, which Skyferry does not');
  const vendor = (o.vendor ?? '').toLowerCase();
  const credentials: Record<string, unknown> = { url: o.url };
  if (vendor && WEBDAV_VENDORS[vendor]) credentials.vendor = WEBDAV_VENDORS[vendor];
  else if (vendor) {
    credentials.vendor = 'other';
    notes.push(`vendor ${o.vendor} taken as a plain WebDAV server`);
  }
  if (o.user) credentials.username = o.user;
  const pass = revealed(o, 'pass');
  if (pass !== undefined) credentials.password = pass;
  return credentials;
}

function sftp(o: Record<string, string>, env: ConvertEnv, notes: string[]): Record<string, unknown> {
  if (!o.host) throw new Skip('it has no host');
  const credentials: Record<string, unknown> = { host: o.host, username: o.user || env.username };
  if (o.port) credentials.port = o.port;
  const pass = revealed(o, 'pass');
  if (pass !== undefined) credentials.password = pass;
  if (o.key_pem) {
    // rclone keeps a PEM key on one line, its line ends written as \n.
    credentials.private_key = o.key_pem.replaceAll('\\n', '\n');
  } else if (o.key_file) {
    try {
      credentials.private_key = env.readKeyFile(o.key_file);
    } catch (err) {
      throw new Skip(`its key_file ${o.key_file} cannot be read (${(err as Error).message})`);
    }
  }
  const passphrase = revealed(o, 'key_file_pass');
  if (passphrase !== undefined && credentials.private_key !== undefined) credentials.passphrase = passphrase;
  if (credentials.password === undefined && credentials.private_key === undefined) {
    throw new Skip('it signs in through ssh-agent (no pass, key_file or key_pem), which Skyferry does not use');
  }
  if (o.key_use_agent === 'true' && credentials.private_key !== undefined)
    notes.push('the key is read from its file, not from ssh-agent');
  if (o.known_hosts_file)
    notes.push(`the host key is learnt at the first connection (${o.known_hosts_file} is not read)`);
  return credentials;
}

function ftp(o: Record<string, string>, env: ConvertEnv): Record<string, unknown> {
  if (!o.host) throw new Skip('it has no host');
  if (isTrue(o.tls))
    throw new Skip('it uses implicit FTPS (tls = true); Skyferry speaks explicit FTPS only (explicit_tls)');
  const credentials: Record<string, unknown> = {
    host: o.host,
    username: o.user || env.username,
    // rclone's FTP default login: anonymous users are asked for any password.
    password: revealed(o, 'pass') ?? '',
  };
  if (credentials.password === '') throw new Skip('it has no pass (Skyferry needs the password of the FTP login)');
  if (o.port) credentials.port = o.port;
  if (isTrue(o.explicit_tls)) credentials.secure = true;
  if (isTrue(o.no_check_certificate)) credentials.insecure_skip_verify = true;
  return credentials;
}

/** An rclone token: JSON with access_token, refresh_token and an RFC 3339 expiry. */
function oauth(
  type: string,
  o: Record<string, string>,
  notes: string[],
): { kind: CloudKind; credentials: Record<string, unknown> } {
  let kind = OAUTH_TYPES[type] as CloudKind;
  if (type === 'drive' && o.service_account_file)
    throw new Skip('it signs in with a service account, which Skyferry does not');
  if (type === 'drive' && o.root_folder_id) {
    throw new Skip(
      `its root_folder_id makes a folder its top, which a Skyferry remote cannot (paths would point elsewhere)`,
    );
  }
  if (type === 'box' && o.box_config_file)
    throw new Skip('it signs in with a JWT app (box_config_file), which Skyferry does not');
  if (!o.token) throw new Skip('it has no token (run rclone config reconnect first)');
  let token: { access_token?: string; refresh_token?: string; expiry?: string };
  try {
    token = JSON.parse(o.token) as typeof token;
  } catch {
    throw new Skip('its token is not JSON');
  }
  if (!token.access_token && !token.refresh_token)
    throw new Skip('its token holds neither an access nor a refresh token');
  const credentials: Record<string, unknown> = {};
  if (token.access_token) credentials.access_token = token.access_token;
  if (token.refresh_token) credentials.refresh_token = token.refresh_token;
  const expiry = token.expiry ? Date.parse(token.expiry) : NaN;
  if (Number.isFinite(expiry) && expiry > 0) credentials.expiry = String(expiry);
  if (o.client_id && o.client_secret) {
    credentials.client_id = o.client_id;
    credentials.client_secret = o.client_secret;
  } else {
    notes.push(
      `the token was issued to rclone's own OAuth client: it is refreshed with the client of ${CLOUD_KIND_INFO[kind].displayName}` +
        ' configured for Skyferry (GOOGLE_CLIENT_ID and the like), which the service may refuse; reconnect then',
    );
  }
  if (o.token_url) credentials.token_url = o.token_url;
  if (type === 'drive' && (o.team_drive || o.drive_id)) credentials.drive_id = o.team_drive || o.drive_id;
  if (type === 'onedrive') {
    if (o.drive_type === 'business' || o.drive_type === 'documentLibrary') kind = 'onedrive_business';
    if (o.drive_id) credentials.drive_id = o.drive_id;
  }
  return { kind, credentials };
}

function convertOne(section: RcloneSection, env: ConvertEnv): ImportedRemote {
  const o = section.options;
  const type = o.type ?? '';
  const notes: string[] = [];
  if (!type) throw new Skip('it has no type');
  if (!REMOTE_NAME.test(section.name)) {
    throw new Skip(
      'a Skyferry remote name is at least two letters, digits, "_", "-" or "." (rename it in rclone first)',
    );
  }
  const done = (kind: CloudKind, credentials: Record<string, unknown>): ImportedRemote => ({
    name: section.name,
    type,
    kind,
    credentials,
    notes,
  });
  switch (type) {
    case 's3': {
      const r = s3(o, notes);
      return done(r.kind, r.credentials);
    }
    case 'webdav':
      return done('webdav', webdav(o, notes));
    case 'sftp':
      return done('sftp', sftp(o, env, notes));
    case 'ftp':
      return done('ftp', ftp(o, env));
    case 'local':
      notes.push("paths are this machine's absolute paths, as with rclone (name:/home/me)");
      return done('local', { path: '/' });
    case 'b2':
      throw new Skip(
        "rclone's b2 speaks Backblaze's own API; Skyferry reaches B2 through its S3 API, whose endpoint (region) the remote does not name:" +
          ` skyferry remotes add ${section.name} backblaze_b2 endpoint=https://s3.<region>.backblazeb2.com access_key_id=<account> secret_access_key=-`,
      );
    default:
      if (OAUTH_TYPES[type]) {
        const r = oauth(type, o, notes);
        return done(r.kind, r.credentials);
      }
      throw new Skip(`Skyferry has no ${type} backend`);
  }
}

/** Converts every section; `existing` names are left alone (reported as skipped). */
export function convertRclone(sections: RcloneSection[], env: ConvertEnv, existing: ReadonlySet<string>): Conversion {
  const out: Conversion = { imported: [], skipped: [] };
  for (const section of sections) {
    const type = section.options.type ?? '';
    if (existing.has(section.name)) {
      out.skipped.push({ name: section.name, type, reason: 'a remote of that name is in the remotes file already' });
      continue;
    }
    try {
      out.imported.push(convertOne(section, env));
    } catch (err) {
      if (!(err instanceof Skip)) throw err;
      out.skipped.push({ name: section.name, type, reason: err.message });
    }
  }
  return out;
}
