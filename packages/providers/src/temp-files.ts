import { randomBytes } from 'node:crypto';

/**
 * The temporary files backends write a file into before renaming it into place, and the leftovers
 * of writes that were cut off (the process killed, the connection lost before the clean-up):
 * shared by the local, FTP, SFTP and WebDAV backends, which hide these names from listings and
 * remove stale ones when a folder is listed or written to. Only the exact names the backends make
 * are theirs: a user's file that merely starts with the prefix is listed, copied and written as
 * any other. A run tags its writes' temporary files (`WriteOptions.tempTag`) to remove what its
 * own cut-off writes left as soon as it resumes or ends (`Provider.removeTemps`).
 */

/** Prefix of in-progress writes. */
export const TEMP_PREFIX = '.skyferry-tmp-';
/**
 * The exact name of a temporary file a backend makes: the prefix and 16 lower-case hex digits (the
 * first eight the run's tag when it gave one). Hidden from listings, never returned by stat, and
 * refused as the name of a file or folder to write.
 */
export const TEMP_NAME = /^\.skyferry-tmp-[0-9a-f]{16}$/;
/** A run's tag of its temporary files: eight lower-case hex digits. */
export const TEMP_TAG = /^[0-9a-f]{8}$/;

/** Whether `name` is a backend's temporary file name (not merely a name with the prefix). */
export function isTempName(name: string): boolean {
  return TEMP_NAME.test(name);
}

/** Whether a name in `path` is a backend's temporary file name. */
export function hasTempSegment(path: string): boolean {
  return path.split('/').some(isTempName);
}

/** Random bytes drawn 4 KiB at a time: a name per small file would otherwise cost a call into the CSPRNG each. */
let randomPool = Buffer.alloc(0);
let randomAt = 0;

function randomHex(bytes: number): string {
  if (randomAt + bytes > randomPool.length) {
    randomPool = randomBytes(4096);
    randomAt = 0;
  }
  const hex = randomPool.toString('hex', randomAt, randomAt + bytes);
  randomAt += bytes;
  return hex;
}

/** A new temporary file name, of the run tagged `tag` when one is given (an invalid tag is ignored). */
export function tempName(tag?: string): string {
  const random = randomHex(8);
  return TEMP_PREFIX + (tag !== undefined && TEMP_TAG.test(tag) ? tag + random.slice(8) : random);
}

/** Whether `name` is a temporary file of the run tagged `tag`. */
export function isTaggedTemp(name: string, tag: string): boolean {
  return TEMP_TAG.test(tag) && isTempName(name) && name.startsWith(TEMP_PREFIX + tag);
}
/**
 * A temporary file untouched for this long was left by a write that was cut off. A running write
 * touches its file with every block; the longest one may sit idle is an upload session waiting for
 * its next part (an hour), so this leaves a wide margin.
 */
export const STALE_TEMP_MS = 2 * 60 * 60 * 1000;
/** Writes look for stale temporary files in a folder at most this often (listings see them anyway). */
const SWEEP_EVERY_MS = 10 * 60 * 1000;
/** When each folder (a key naming the account and the folder) was last searched, across this process. */
const lastSweep = new Map<string, number>();

/** Temporary files of writes running in this process (a key naming the account and the path): never removed. */
export const activeTemps = new Set<string>();

/** Records that a folder was searched for stale temporary files (or is new: it holds none). */
export function markSwept(folderKey: string, now = Date.now()): void {
  if (lastSweep.size >= 10_000) lastSweep.clear();
  lastSweep.set(folderKey, now);
}

/** Whether a write into the folder should look for stale temporary files first. */
export function sweepDue(folderKey: string, now = Date.now()): boolean {
  return now - (lastSweep.get(folderKey) ?? 0) >= SWEEP_EVERY_MS;
}
