/**
 * `skyferry remotes import-rclone [FILE] --to-server URL`: the converted remotes connected as
 * clouds of a Skyferry account through its API (POST /api/clouds, which checks each one against
 * its service), instead of written to the remotes file. The account: SKYFERRY_TOKEN (an access
 * token), or SKYFERRY_EMAIL and SKYFERRY_PASSWORD (a session opened for the import and ended
 * after it). Passwords never travel in clear: the server must be https unless it is on loopback.
 */
import { isIP } from 'node:net';
import { CLOUD_KIND_INFO, MAX_ALIAS_LENGTH } from '@skyferry/contract';
import { UsageError } from '../errors.ts';
import type { CliIo } from '../io.ts';
import type { ImportedRemote, SkippedRemote } from './convert.ts';

interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

export interface ServerImport {
  added: Array<{ name: string; cloudId: string }>;
  skipped: SkippedRemote[];
}

function serverBase(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--to-server ${url}: not a URL (for example https://skyferry.example.com)`);
  }
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback)) {
    throw new UsageError(`--to-server ${url}: use https (credentials are sent to it); plain http only to this machine`);
  }
  return u.origin + u.pathname.replace(/\/+$/, '');
}

async function call<T>(
  base: string,
  method: string,
  path: string,
  body: unknown,
  token?: string,
): Promise<Envelope<T>> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        'accept-language': 'en',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new UsageError(`cannot reach ${base}: ${(err as Error).message}`);
  }
  try {
    return (await res.json()) as Envelope<T>;
  } catch {
    throw new UsageError(`${base} answered ${res.status} without Skyferry's JSON: is it a Skyferry server?`);
  }
}

/** Each `{ "env": NAME }` value read from this environment now (the server keeps values, not names). */
function resolveEnv(credentials: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> | string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(credentials)) {
    const name = typeof v === 'object' && v !== null ? (v as { env?: unknown }).env : undefined;
    if (typeof name === 'string') {
      const value = env[name];
      if (!value) return `its ${k} comes from $${name}, which is not set here`;
      out[k] = value;
    } else out[k] = v;
  }
  return out;
}

export async function importToServer(url: string, remotes: ImportedRemote[], io: CliIo): Promise<ServerImport> {
  const base = serverBase(url);
  let token = io.env.SKYFERRY_TOKEN;
  let session = false;
  if (!token) {
    const email = io.env.SKYFERRY_EMAIL;
    const password = io.env.SKYFERRY_PASSWORD;
    if (!email || !password) {
      throw new UsageError(
        '--to-server needs the account: set SKYFERRY_TOKEN, or SKYFERRY_EMAIL and SKYFERRY_PASSWORD',
      );
    }
    const signed = await call<{ access_token: string }>(base, 'POST', '/api/account/login', { email, password });
    if (signed.code !== 0) throw new UsageError(`signing in to ${base}: ${signed.msg}`);
    token = signed.data.access_token;
    session = true;
  }
  const result: ServerImport = { added: [], skipped: [] };
  try {
    for (const r of remotes) {
      const skip = (reason: string) => result.skipped.push({ name: r.name, type: r.type, reason });
      if (CLOUD_KIND_INFO[r.kind].auth === 'oauth') {
        skip(`connect it in Skyferry's web app: its token belongs to rclone's own OAuth client`);
        continue;
      }
      const credentials = resolveEnv(r.credentials, io.env);
      if (typeof credentials === 'string') {
        skip(credentials);
        continue;
      }
      const made = await call<{ id: string }>(
        base,
        'POST',
        '/api/clouds',
        { cloud_name: r.kind, alias: r.name.slice(0, MAX_ALIAS_LENGTH), credentials },
        token,
      );
      if (made.code === 0) result.added.push({ name: r.name, cloudId: made.data.id });
      else skip(`${base} refused it: ${made.msg}`);
    }
  } finally {
    if (session) await call(base, 'POST', '/api/account/logout', {}, token).catch(() => undefined);
  }
  return result;
}
