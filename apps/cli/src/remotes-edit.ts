/**
 * `skyferry remotes add` and `remotes remove`: the remotes file written for the user, checked as
 * it is read (the web app's form checks), kept readable by its owner alone. A secret can be given
 * without leaving it in the shell's history: `field=@env:NAME` stores a reference to an environment
 * variable, `field=-` reads the value from standard input, `field=@file:PATH` reads a file (an SSH
 * private key).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CLOUD_KIND_INFO, type CloudKind } from '@skyferry/contract';
import { UsageError } from './errors.ts';
import type { CliIo } from './io.ts';
import { absolutePath, checkRemote, writePrivate } from './remotes.ts';

export type RawFile = { remotes: Record<string, unknown> } & Record<string, unknown>;

export async function readRaw(file: string): Promise<RawFile> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as RawFile;
  } catch (err) {
    // loadRemotes already refused a file that exists and is not a remotes file.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { remotes: {} };
    throw err;
  }
}

export function writeRaw(file: string, raw: RawFile): Promise<void> {
  return writePrivate(file, `${JSON.stringify(raw, null, 2)}\n`);
}

async function readStdin(io: CliIo): Promise<string> {
  if (!io.stdin) throw new UsageError('"-" reads a value from standard input, which this run has none of');
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export async function addRemote(
  file: string,
  args: string[],
  io: CliIo,
  opts: { openBrowser: boolean } = { openBrowser: true },
): Promise<void> {
  const [name, kind, ...assignments] = args;
  if (!name || !kind) throw new UsageError('usage: skyferry remotes add <name> <kind> [field=value ...]');
  const raw = await readRaw(file);
  if (Object.hasOwn(raw.remotes, name)) {
    throw new UsageError(
      `there is a remote "${name}" in ${file} already; remove it first (skyferry remotes remove ${name})`,
    );
  }
  const given: Record<string, unknown> = {};
  let stdinUsed = false;
  const typed: string[] = [];
  for (const a of assignments) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new UsageError(`"${a}" is not field=value`);
    const field = a.slice(0, eq);
    const value = a.slice(eq + 1);
    if (Object.hasOwn(given, field)) throw new UsageError(`field "${field}" is given twice`);
    if (value.startsWith('@env:')) given[field] = { env: value.slice(5) };
    else if (value.startsWith('@file:')) {
      const path = value.slice(6);
      const abs = absolutePath(io, path);
      try {
        given[field] = await readFile(abs, 'utf8');
      } catch (err) {
        throw new UsageError(`field "${field}": cannot read ${abs}: ${(err as Error).message}`);
      }
    } else if (value === '-') {
      if (stdinUsed) throw new UsageError('only one field can be read from standard input ("-")');
      stdinUsed = true;
      given[field] = await readStdin(io);
    } else {
      given[field] = value;
      typed.push(field);
    }
  }
  const kindInfo = (CLOUD_KIND_INFO as Record<string, (typeof CLOUD_KIND_INFO)[CloudKind] | undefined>)[kind];
  if (kindInfo?.auth === 'oauth' && given.access_token === undefined && given.refresh_token === undefined) {
    // No token given: sign in now (rclone's auth_url names another authorization endpoint).
    const { authorize } = await import('./oauth-flow.ts');
    const text = (field: string) => (typeof given[field] === 'string' ? (given[field] as string) : undefined);
    const clientId = text('client_id');
    const clientSecret = text('client_secret');
    const authUrl = text('auth_url');
    const tokenUrl = text('token_url');
    delete given.auth_url;
    Object.assign(
      given,
      await authorize(
        {
          kind: kindInfo.kind,
          ...(clientId && clientSecret ? { client: { clientId, clientSecret } } : {}),
          ...(authUrl ? { authUrl } : {}),
          ...(tokenUrl ? { tokenUrl } : {}),
          openBrowser: opts.openBrowser,
        },
        io,
      ),
    );
  }
  // The checks a remotes file gets when it is read; what is stored is the checked value (numbers,
  // booleans) or the reference to the environment, never the variable's value.
  const { remote } = checkRemote(name, { kind, credentials: given }, io.env, `(remotes add)`);
  const stored: Record<string, unknown> = {};
  for (const [field, v] of Object.entries(given)) {
    stored[field] = typeof v === 'object' && v !== null ? v : (remote.credentials[field] ?? v);
  }
  // Defined, not assigned: a remote named "__proto__" is a name like any other.
  Object.defineProperty(raw.remotes, name, {
    value: { kind, credentials: stored },
    enumerable: true,
    writable: true,
    configurable: true,
  });
  await writeRaw(file, raw);
  const info = CLOUD_KIND_INFO[remote.kind];
  io.stdout.write(`added remote ${name} (${info.displayName}) to ${file}\n`);
  const typedSecrets = typed.filter((field) => info.fields.find((f) => f.name === field)?.secret);
  if (typedSecrets.length > 0) {
    io.stderr.write(
      `note: ${typedSecrets.join(', ')} was typed on the command line and may be in your shell's history;` +
        ' "field=-" reads it from standard input and "field=@env:NAME" from the environment.\n',
    );
  }
}

export async function removeRemote(file: string, stateDir: string, args: string[], io: CliIo): Promise<void> {
  const [name, ...rest] = args;
  if (!name || rest.length > 0) throw new UsageError('usage: skyferry remotes remove <name>');
  const raw = await readRaw(file);
  if (!Object.hasOwn(raw.remotes, name)) throw new UsageError(`there is no remote "${name}" in ${file}`);
  delete raw.remotes[name];
  await writeRaw(file, raw);
  // What was kept about it (an SFTP server's host key) goes too: a new remote of that name starts afresh.
  await rm(join(stateDir, 'remotes', `${name}.json`), { force: true });
  io.stdout.write(`removed remote ${name} from ${file}\n`);
}
