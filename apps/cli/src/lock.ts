/**
 * One run at a time per pair of places: a lock file in the state folder, beside the resume files
 * and two-way state the run writes. A second run of the same pair finds it and stops with a clear
 * message instead of sharing (and breaking) that state. A lock whose process is gone (killed, the
 * machine restarted) is stale and taken over: on this host by its process id and start time (a
 * reused id is told apart), from another host (a shared home folder) only when the user removes it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

interface Holder {
  pid: number;
  host: string;
  /** The process's start (clock ticks since boot, from /proc), when the system tells it. */
  start?: string;
  since: string;
  command: string;
  token: string;
}

/** Another run of the pair holds the lock. */
export class PairLockedError extends Error {
  readonly holder: Holder;
  readonly file: string;
  constructor(holder: Holder, file: string) {
    const when = holder.since.slice(0, 19).replace('T', ' ');
    super(
      `another sync of this pair is running (skyferry ${holder.command}, process ${holder.pid} on ${holder.host}, ` +
        `since ${when} UTC; lock ${file}); run again once it has finished` +
        (holder.host === hostname() ? '' : ', or remove the lock if it is no longer running'),
    );
    this.name = 'PairLockedError';
    this.holder = holder;
    this.file = file;
  }
}

/** A process's start time on Linux (field 22 of /proc/<pid>/stat), or undefined elsewhere. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function alive(h: Holder): boolean {
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
  // The same id, another process: the holder is gone.
  const now = processStart(h.pid);
  return h.start === undefined || now === undefined || now === h.start;
}

async function readHolder(file: string): Promise<Holder | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Holder;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock `name` in `stateDir/locks` for `command`; throws PairLockedError while another
 * live run holds it. Answers the release (which removes the file only while it is still this run's).
 */
export async function lockPair(stateDir: string, name: string, command: string): Promise<() => Promise<void>> {
  const dir = join(stateDir, 'locks');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${name}.lock`);
  const start = processStart(process.pid);
  const me: Holder = {
    pid: process.pid,
    host: hostname(),
    ...(start !== undefined ? { start } : {}),
    since: new Date().toISOString(),
    command,
    token: randomBytes(8).toString('hex'),
  };
  // Written whole beside it, then linked into place: the lock appears complete or not at all.
  const tmp = `${file}.${me.token}`;
  await writeFile(tmp, JSON.stringify(me), { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(tmp, file);
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST' || attempt >= 3) throw err;
      }
      const holder = await readHolder(file);
      if (holder && (holder.host !== me.host || alive(holder))) throw new PairLockedError(holder, file);
      // Stale (or unreadable: a lock is written whole, so only a foreign file is): taken away, by a
      // rename, so that a fresh lock another run made meanwhile is seen and given back.
      const grave = `${file}.stale.${me.token}`;
      try {
        await rename(file, grave);
      } catch (err) {
        if ((err as { code?: string }).code === 'ENOENT') continue;
        throw err;
      }
      const grabbed = await readHolder(grave);
      if (holder && grabbed && grabbed.token !== holder.token) {
        await link(grave, file).catch(() => undefined);
        await rm(grave, { force: true });
        throw new PairLockedError(grabbed, file);
      }
      await rm(grave, { force: true });
    }
  } finally {
    await rm(tmp, { force: true });
  }
  return async () => {
    if ((await readHolder(file))?.token === me.token) await rm(file, { force: true });
  };
}
