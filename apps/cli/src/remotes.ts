/**
 * Where the command line's paths lead: `name:path` names a remote of the remotes file, anything
 * else is a folder or file on this machine. Remotes are the protocol kinds a user connects with a
 * form in the web app (S3 and S3-compatible stores, WebDAV, SFTP, FTP, a local folder) and the
 * OAuth kinds given their tokens (imported from rclone, or written with `remotes add`).
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import {
  CLOUD_KIND_INFO,
  CLOUD_KINDS,
  CredentialsError,
  checkCredentials,
  message,
  OBJECT_STORAGE_KINDS,
  type CloudKind,
  type CloudKindInfo,
  type CredentialField,
} from '@skyferry/contract';
import {
  cleanPath,
  configureOAuthClients,
  openProvider,
  type OAuthServiceName,
  type Provider,
  type ProviderContext,
} from '@skyferry/providers';
import { UsageError } from './errors.ts';

/** One remote of the remotes file, as written there. */
interface RemoteConfig {
  kind: string;
  credentials: Record<string, unknown>;
}

/** A remote ready to open: kind and credentials with every `{ "env": NAME }` filled in. */
export interface Remote {
  name: string;
  kind: CloudKind;
  credentials: Record<string, unknown>;
}

/** A path of the command line, resolved. */
export interface Location {
  /** How the user wrote it (for messages). */
  text: string;
  /** A remote's name, or undefined for this machine. */
  remote?: string;
  /** The remote, or the local folder the provider is opened on. */
  open: () => Promise<Provider>;
  /** The path inside the provider ('/' is its root). */
  path: string;
  /** Identifies the place across runs (resume and two-way state files are keyed by it). */
  key: string;
}

export interface Environment {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * Writes a file of the user's alone (mode 600, its folder 700) at once: written beside it, then
 * renamed over it, so a reader never sees half of it.
 */
export async function writePrivate(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, file);
}

/** A path as the user typed it, absolute: relative to the working folder, "~/" the home folder. */
export function absolutePath(envr: Environment, text: string): string {
  return resolve(envr.cwd, text.startsWith('~/') ? join(envr.env.HOME || homedir(), text.slice(2)) : text);
}

/** Where the remotes file is: --config, SKYFERRY_CONFIG, or the user's configuration folder. */
export function remotesFilePath(envr: Environment, flag?: string): string {
  if (flag) return resolve(envr.cwd, flag);
  if (envr.env.SKYFERRY_CONFIG) return resolve(envr.cwd, envr.env.SKYFERRY_CONFIG);
  const base = envr.env.XDG_CONFIG_HOME || join(envr.env.HOME || homedir(), '.config');
  return join(base, 'skyferry', 'remotes.json');
}

/** Where runs keep their resume files and two-way state: SKYFERRY_STATE_DIR or the user's state folder. */
export function stateDirPath(envr: Environment): string {
  if (envr.env.SKYFERRY_STATE_DIR) return resolve(envr.cwd, envr.env.SKYFERRY_STATE_DIR);
  const base = envr.env.XDG_STATE_HOME || join(envr.env.HOME || homedir(), '.local', 'state');
  return join(base, 'skyferry');
}

/** The kinds the command line opens: every kind (the OAuth ones given their tokens). */
export const CLI_KINDS: readonly CloudKind[] = CLOUD_KINDS;

const secretText = (name: string, label: string): CredentialField => ({
  name,
  label,
  type: 'password',
  required: false,
  secret: true,
});
const text = (name: string, label: string, type: 'text' | 'url' = 'text', pattern?: string): CredentialField => ({
  name,
  label,
  type,
  required: false,
  secret: false,
  ...(pattern ? { pattern } : {}),
});

/**
 * What a remote of an OAuth kind holds: the grant (as the OAuth backends read it), the OAuth
 * client that issued it when it is not the one configured by GOOGLE_CLIENT_ID and the like, and
 * the backend's settings and endpoint overrides.
 */
export const OAUTH_FIELDS: readonly CredentialField[] = [
  secretText('access_token', 'Access token'),
  secretText('refresh_token', 'Refresh token'),
  text('expiry', 'Access token expiry (ms since the epoch)', 'text', '^[0-9]{1,16}$'),
  text('client_id', 'OAuth client id'),
  secretText('client_secret', 'OAuth client secret'),
  text('drive_id', 'Drive id'),
  text('account_id', 'Account id'),
  text('token_url', 'Token endpoint', 'url'),
  text('api_url', 'API address', 'url'),
  text('upload_url', 'Upload address', 'url'),
  text('content_url', 'Content address', 'url'),
];

/** The fields a remote of this kind may hold. */
export function fieldsOf(info: CloudKindInfo): readonly CredentialField[] {
  return info.auth === 'oauth' ? OAUTH_FIELDS : info.fields;
}

/**
 * The OAuth clients that refresh the tokens of remotes carrying none of their own: the server's
 * variables (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET, MICROSOFT_..., DROPBOX_..., BOX_...).
 */
export function configureOAuthFromEnv(env: NodeJS.ProcessEnv): void {
  const services: OAuthServiceName[] = ['google', 'microsoft', 'dropbox', 'box'];
  configureOAuthClients(
    Object.fromEntries(
      services.flatMap((s) => {
        const id = env[`${s.toUpperCase()}_CLIENT_ID`];
        const secret = env[`${s.toUpperCase()}_CLIENT_SECRET`];
        return id && secret ? [[s, { clientId: id, clientSecret: secret }]] : [];
      }),
    ),
  );
}

/**
 * An object-storage remote with no bucket takes it from the path, as rclone's do
 * (`store:bucket/folder`).
 */
function bucketInPath(remote: Remote): boolean {
  return OBJECT_STORAGE_KINDS.has(remote.kind) && !remote.credentials.bucket;
}

const REMOTE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** `name:rest`; a single letter before the colon is a Windows drive, not a remote. */
const REMOTE_PATH = /^([A-Za-z0-9_][A-Za-z0-9_.-]+):(.*)$/s;

/** The remotes of a remotes file, checked; secrets stay inside the returned objects only. */
export async function loadRemotes(file: string, env: NodeJS.ProcessEnv): Promise<Map<string, Remote>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new UsageError(`cannot read the remotes file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`the remotes file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const remotes = (parsed as { remotes?: unknown } | null)?.remotes;
  if (typeof remotes !== 'object' || remotes === null || Array.isArray(remotes)) {
    throw new UsageError(`the remotes file ${file} must hold an object { "remotes": { "<name>": { ... } } }`);
  }
  const out = new Map<string, Remote>();
  let clearSecret = false;
  for (const [name, value] of Object.entries(remotes)) {
    const checked = checkRemote(name, value, env, `in ${file}`);
    clearSecret ||= checked.clearSecret;
    out.set(name, checked.remote);
  }
  if (clearSecret) await refuseReadableByOthers(file);
  return out;
}

/**
 * Checks one remote as written in a remotes file (`where` says where, for messages): its name,
 * kind and fields, with the web app's checks of the same form; `{ "env": NAME }` values are read
 * from `env`. `clearSecret`: a secret is written in it as is.
 */
export function checkRemote(
  name: string,
  value: unknown,
  env: NodeJS.ProcessEnv,
  where: string,
): { remote: Remote; clearSecret: boolean } {
  let clearSecret = false;
  if (!REMOTE_NAME.test(name) || name.length < 2) {
    throw new UsageError(
      `remote "${name}" ${where}: a name is at least two letters, digits, "_", "-" or "." (and starts with a letter, digit or "_")`,
    );
  }
  const r = value as Partial<RemoteConfig> | null;
  if (typeof r !== 'object' || r === null || typeof r.kind !== 'string') {
    throw new UsageError(`remote "${name}" ${where} needs a "kind" (one of ${CLI_KINDS.join(', ')})`);
  }
  const info = (CLOUD_KIND_INFO as Record<string, CloudKindInfo | undefined>)[r.kind];
  if (!info || !CLI_KINDS.includes(info.kind)) {
    throw new UsageError(
      `remote "${name}" ${where}: kind "${r.kind}" is not one the command line opens; use one of ${CLI_KINDS.join(', ')}`,
    );
  }
  const fields = fieldsOf(info);
  const given = r.credentials ?? {};
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw new UsageError(`remote "${name}" ${where}: "credentials" must be an object`);
  }
  const credentials: Record<string, unknown> = {};
  for (const [field, v] of Object.entries(given)) {
    const spec = fields.find((f) => f.name === field);
    if (!spec) {
      throw new UsageError(
        `remote "${name}" ${where}: ${info.displayName} has no field "${field}" (fields: ${fields.map((f) => f.name).join(', ')})`,
      );
    }
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { env?: unknown }).env === 'string') {
      const variable = (v as { env: string }).env;
      const fromEnv = env[variable];
      if (fromEnv === undefined) {
        throw new UsageError(`remote "${name}": field "${field}" is read from $${variable}, which is not set`);
      }
      credentials[field] = fromEnv;
    } else {
      if (spec.secret && v !== '' && v !== null && v !== undefined) clearSecret = true;
      credentials[field] = v;
    }
  }
  if (info.auth === 'oauth' && !credentials.access_token && !credentials.refresh_token) {
    throw new UsageError(
      `remote "${name}" ${where}: ${info.displayName} needs its OAuth token (access_token and refresh_token);` +
        ' skyferry remotes import-rclone takes it from an rclone remote',
    );
  }
  // An object-storage remote without a bucket names it in each path (checked there).
  const noBucket =
    OBJECT_STORAGE_KINDS.has(info.kind) && (credentials.bucket === undefined || credentials.bucket === '');
  // The web app's checks of the same form: required fields, numbers, booleans, URLs, choices.
  let checked: Record<string, unknown>;
  try {
    checked = checkCredentials(
      { ...info, fields },
      noBucket ? { ...credentials, bucket: 'bucket-in-path' } : credentials,
    );
    if (noBucket) delete checked.bucket;
  } catch (err) {
    if (!(err instanceof CredentialsError)) throw err;
    const label = fields.find((f) => f.name === err.field)?.label ?? err.field;
    throw new UsageError(
      `remote "${name}" ${where}: ` +
        (err.missing ? `${info.displayName} needs "${err.field}" (${label})` : message('en', err.key, err.params)),
    );
  }
  return { remote: { name, kind: info.kind, credentials: checked }, clearSecret };
}

/** Like ssh with a private key: a file holding secrets must not be readable by other users. */
async function refuseReadableByOthers(file: string): Promise<void> {
  if (process.platform === 'win32') return;
  const { mode } = await stat(file);
  if ((mode & 0o077) !== 0) {
    throw new UsageError(
      `${file} holds secrets and other users can read it (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${file}` +
        ` (or give secrets as { "env": "VARIABLE" })`,
    );
  }
}

/**
 * Non-secret state a backend keeps for a remote (an SFTP host key seen at the first connection,
 * checked at every later one), saved beside the run state.
 */
function remoteContext(stateDir: string, name: string): () => Promise<ProviderContext> {
  const file = join(stateDir, 'remotes', `${name}.json`);
  return async () => {
    let state: Record<string, unknown> = {};
    try {
      state = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    } catch {
      // No state yet (first connection).
    }
    return {
      state,
      saveState: (next) => writePrivate(file, JSON.stringify(next)),
    };
  };
}

/**
 * Resolves one path of the command line. A local path opens the local-folder kind on its parent
 * folder (so the named file or folder itself can be copied, or created as a target).
 */
export function locate(
  text: string,
  remotes: Map<string, Remote>,
  envr: Environment,
  stateDir: string,
  remotesFile: string,
): Location {
  const m = REMOTE_PATH.exec(text);
  if (m && !text.startsWith('/') && !text.startsWith('.')) {
    const name = m[1] as string;
    const remote = remotes.get(name);
    if (!remote) {
      const known = [...remotes.keys()];
      throw new UsageError(
        `no remote named "${name}" in ${remotesFile}` +
          (known.length ? ` (remotes: ${known.join(', ')})` : ' (it has no remotes yet; see skyferry --help)'),
      );
    }
    const full = cleanPath(`/${m[2] ?? ''}`);
    const context = remoteContext(stateDir, name);
    let credentials = remote.credentials;
    let path = full;
    if (bucketInPath(remote)) {
      const [bucket, ...rest] = full.split('/').slice(1);
      if (!bucket)
        throw new UsageError(`remote "${name}" names no bucket: give one in the path (${name}:bucket/folder)`);
      credentials = { ...credentials, bucket };
      path = cleanPath(`/${rest.join('/')}`);
    }
    const roots = remote.kind === 'local' ? [String(credentials.path)] : undefined;
    return {
      text,
      remote: name,
      path,
      key: `${name}:${full}`,
      open: async () =>
        openProvider(remote.kind, credentials, { ...(await context()), ...(roots ? { localRoots: roots } : {}) }),
    };
  }
  const abs = absolutePath(envr, text);
  const root = abs === '/' ? '/' : dirname(abs);
  const path = abs === '/' ? '/' : `/${basename(abs)}`;
  return {
    text,
    path,
    key: `local:${abs}`,
    open: async () => openProvider('local', { path: root }, { localRoots: [root] }),
  };
}
