/**
 * `skyferry remotes import-rclone [FILE]`: every remote of an rclone configuration whose backend
 * Skyferry has, added to the remotes file under its own name (mode 600, checked as the file is
 * read); what was left out is listed with the reason.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { CLOUD_KIND_INFO } from '@skyferry/contract';
import { UsageError } from '../errors.ts';
import type { CliIo } from '../io.ts';
import { absolutePath, checkRemote, type Environment } from '../remotes.ts';
import { readRaw, writeRaw } from '../remotes-edit.ts';
import { convertRclone, parseRcloneConfig, RcloneConfigError, type Conversion } from './convert.ts';
import { importToServer } from './to-server.ts';

/** rclone's own choice: $RCLONE_CONFIG, else ~/.config/rclone/rclone.conf, else the older ~/.rclone.conf. */
export async function rcloneConfigPath(envr: Environment): Promise<string> {
  if (envr.env.RCLONE_CONFIG) return absolutePath(envr, envr.env.RCLONE_CONFIG);
  const home = envr.env.HOME || homedir();
  const base = envr.env.XDG_CONFIG_HOME || join(home, '.config');
  const current = join(base, 'rclone', 'rclone.conf');
  const legacy = join(home, '.rclone.conf');
  try {
    await readFile(current);
    return current;
  } catch {
    try {
      await readFile(legacy);
      return legacy;
    } catch {
      return current;
    }
  }
}

/** Every variable looks set: `{ "env": NAME }` values are checked for their shape, not read now. */
const ANY_ENV = new Proxy({}, { get: () => 'set' }) as NodeJS.ProcessEnv;

export async function importRclone(
  remotesFile: string,
  args: string[],
  io: CliIo,
  opts: { dryRun: boolean; json: boolean; toServer?: string },
): Promise<Conversion> {
  if (args.length > 1) throw new UsageError('usage: skyferry remotes import-rclone [rclone.conf]');
  const source = args[0] ? absolutePath(io, args[0]) : await rcloneConfigPath(io);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the rclone configuration ${source}: ${(err as Error).message}`);
  }
  let conversion: Conversion;
  const raw = await readRaw(remotesFile);
  try {
    conversion = convertRclone(
      parseRcloneConfig(text),
      {
        username: io.env.USER || io.env.LOGNAME || userInfo().username,
        readKeyFile: (path) => readFileSync(absolutePath(io, path), 'utf8'),
      },
      // Names taken in the remotes file matter only when writing into it.
      new Set(opts.toServer === undefined ? Object.keys(raw.remotes) : []),
    );
  } catch (err) {
    if (err instanceof RcloneConfigError) throw new UsageError(`${source}: ${err.message}`);
    throw err;
  }
  // Each remote passes the checks the remotes file gets when it is read, or is skipped with their message.
  const imported = [];
  for (const r of conversion.imported) {
    try {
      checkRemote(r.name, { kind: r.kind, credentials: r.credentials }, ANY_ENV, '(from rclone)');
      imported.push(r);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      conversion.skipped.push({ name: r.name, type: r.type, reason: err.message });
    }
  }
  conversion.imported = imported;
  if (opts.toServer !== undefined && !opts.dryRun) return toServer(opts.toServer, source, conversion, io, opts.json);
  if (!opts.dryRun && imported.length > 0) {
    for (const r of imported) {
      // Defined, not assigned: a remote named "__proto__" is a name like any other.
      Object.defineProperty(raw.remotes, r.name, {
        value: { kind: r.kind, credentials: r.credentials },
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    await writeRaw(remotesFile, raw);
  }
  if (opts.json) {
    io.stdout.write(
      JSON.stringify({
        from: source,
        to: remotesFile,
        dryRun: opts.dryRun,
        imported: imported.map((r) => ({ name: r.name, type: r.type, kind: r.kind, notes: r.notes })),
        skipped: conversion.skipped,
      }) + '\n',
    );
    return conversion;
  }
  const verb = opts.dryRun ? 'would import' : 'imported';
  for (const r of imported) {
    io.stdout.write(`${verb} ${r.name} (rclone ${r.type}) as ${CLOUD_KIND_INFO[r.kind].displayName}\n`);
    for (const n of r.notes) io.stdout.write(`  note: ${n}\n`);
  }
  for (const s of conversion.skipped)
    io.stdout.write(`skipped ${s.name}${s.type ? ` (rclone ${s.type})` : ''}: ${s.reason}\n`);
  io.stdout.write(
    `${opts.dryRun ? 'Dry run, nothing written: ' : ''}${imported.length} remote${imported.length === 1 ? '' : 's'} ${verb}` +
      ` from ${source}${opts.dryRun ? '' : ` into ${remotesFile}`}, ${conversion.skipped.length} skipped.\n`,
  );
  return conversion;
}

/** The import into a Skyferry account (--to-server): what the server took, and what it did not. */
async function toServer(
  url: string,
  source: string,
  conversion: Conversion,
  io: CliIo,
  json: boolean,
): Promise<Conversion> {
  const done = await importToServer(url, conversion.imported, io);
  const added = new Set(done.added.map((a) => a.name));
  conversion.imported = conversion.imported.filter((r) => added.has(r.name));
  conversion.skipped.push(...done.skipped);
  if (json) {
    io.stdout.write(
      JSON.stringify({
        from: source,
        to: url,
        dryRun: false,
        imported: conversion.imported.map((r) => ({ name: r.name, type: r.type, kind: r.kind, notes: r.notes })),
        skipped: conversion.skipped,
      }) + '\n',
    );
    return conversion;
  }
  for (const r of conversion.imported)
    io.stdout.write(`connected ${r.name} (rclone ${r.type}) as ${CLOUD_KIND_INFO[r.kind].displayName}\n`);
  for (const s of conversion.skipped)
    io.stdout.write(`skipped ${s.name}${s.type ? ` (rclone ${s.type})` : ''}: ${s.reason}\n`);
  const n = conversion.imported.length;
  io.stdout.write(
    `${n} remote${n === 1 ? '' : 's'} connected from ${source} to ${url}, ${conversion.skipped.length} skipped.\n`,
  );
  return conversion;
}
