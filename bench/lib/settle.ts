import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '@skyferry/testing';

/** Reads every file under `dir`, which brings it into the page cache. */
export async function readAll(dir: string): Promise<void> {
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const fh = await open(join(entry.parentPath, entry.name), 'r');
    try {
      while ((await fh.read(buffer, 0, buffer.length, null)).bytesRead > 0);
    } finally {
      await fh.close();
    }
  }
}

/**
 * Brings the machine to the same state before every measured run (untimed): earlier runs' writes
 * flushed to disk (`sync`), so their writeback does not land in this run, and the files the run
 * reads brought into the page cache. This VM's kernel pages out page cache it has not touched for a
 * few minutes (DAMON), so without this whichever run came first after a pause read part of its
 * source from disk (a gigabyte source was found 35-65 % resident); and rclone's local reads tell
 * the kernel to drop what they read (fadvise DONTNEED), so a run after rclone's read from disk.
 */
export async function settle(...dirs: string[]): Promise<void> {
  await run('sync', []);
  for (const dir of dirs) await readAll(dir);
}
