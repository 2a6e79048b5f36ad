import { readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startApacheWebdav,
  startNextcloudEmulator,
  startRcloneServe,
  type NextcloudEmulator,
  type NextcloudEmulatorOptions,
  type WebdavServer,
} from '@skyferry/testing';
import type { ProviderContext } from '../../api/registry.ts';
import { MTIME_STATE_KEY, type MtimeRecord } from './mtime.ts';
import { openWebdav, type WebdavProvider } from './webdav.ts';

/** A file's time far from now, to the second (what WebDAV listings carry). */
const THEN = new Date('2020-05-06T07:08:09Z');
const LATER = new Date('2021-01-02T03:04:05Z');

/** A provider context as the clouds service gives one: state kept across opens, saves recorded. */
function context(state: Record<string, unknown> = {}) {
  const saves: Array<Record<string, unknown>> = [];
  const ctx: ProviderContext = {
    state,
    saveState: async (next) => {
      Object.assign(state, next);
      saves.push(structuredClone(next));
    },
  };
  return { ctx, state, saves };
}

const recorded = (state: Record<string, unknown>) => state[MTIME_STATE_KEY] as MtimeRecord | undefined;

async function put(dav: WebdavProvider, path: string, text: string, modTime: Date) {
  return dav.put(path, Readable.from([Buffer.from(text)]), { size: Buffer.byteLength(text), modTime });
}

/** Writes `size` bytes through the chunk writer (ranged writes on generic servers). */
async function putChunked(dav: WebdavProvider, path: string, size: number, modTime: Date) {
  const w = await dav.openChunkWriter?.(path, { size, modTime });
  if (!w) throw new Error('no chunk writer');
  const data = Buffer.alloc(size, 7);
  for (let i = 0; i * w.chunkSize < size; i += 1)
    await w.writeChunk(i, data.subarray(i * w.chunkSize, (i + 1) * w.chunkSize));
  return w.close();
}

describe('WebDAV servers that keep no given time (Apache mod_dav refuses PROPPATCH of getlastmodified)', () => {
  let server: WebdavServer;
  beforeAll(async () => {
    server = await startApacheWebdav();
  });
  afterAll(async () => {
    await server?.stop();
  });
  const creds = () => ({ url: server.url, username: server.username, password: server.password });

  it('are found out once and reported: setModTime false, recorded in the cloud’s state, the probe file gone', async () => {
    const { ctx, state, saves } = context();
    const dav = await openWebdav(creds(), ctx);
    try {
      expect([dav.vendor, dav.mtime, dav.features.setModTime]).toEqual(['other', 'none', false]);
      expect(recorded(state)?.method).toBe('none');
      expect(saves).toHaveLength(1);
      expect(readdirSync(server.dir)).toEqual([]);
      // What is really there: the time of the write, not the source's.
      const e = await put(dav, '/a.txt', 'a', THEN);
      expect(e.modTime?.getTime()).not.toBe(THEN.getTime());
    } finally {
      await dav.close();
    }
    // Opened again with the record: no second probe.
    const again = await openWebdav(creds(), ctx);
    try {
      expect(again.features.setModTime).toBe(false);
      expect(saves).toHaveLength(1);
    } finally {
      await again.close();
    }
  });

  it('a record that promised times is corrected by the first write that shows otherwise', async () => {
    const { ctx, state } = context({ [MTIME_STATE_KEY]: { method: 'x-oc-mtime', checked_at: Date.now() } });
    const dav = await openWebdav(creds(), ctx);
    try {
      expect(dav.features.setModTime).toBe(true);
      const e = await put(dav, '/b.txt', 'b', THEN);
      expect(e.modTime?.getTime()).not.toBe(THEN.getTime());
      expect([dav.mtime, dav.features.setModTime]).toEqual(['none', false]);
      expect(recorded(state)?.method).toBe('none');
    } finally {
      await dav.close();
    }
  });
});

describe('rclone serve webdav', () => {
  let server: WebdavServer;
  beforeAll(async () => {
    server = await startRcloneServe('webdav');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('reports whether it keeps times as its writes really do (1.6x takes X-OC-Mtime, older ones keep none)', async () => {
    const { ctx, state } = context();
    const dav = await openWebdav({ url: server.url, username: server.username, password: server.password }, ctx);
    try {
      const claimed = dav.features.setModTime;
      expect(recorded(state)?.method).toBe(dav.mtime);
      const e = await put(dav, '/r.txt', 'r', THEN);
      expect(e.modTime?.getTime() === THEN.getTime()).toBe(claimed);
      expect((await dav.stat('/r.txt')).modTime?.getTime() === THEN.getTime()).toBe(claimed);
    } finally {
      await dav.close();
    }
  });
});

const keepers: Array<[string, NextcloudEmulatorOptions, string]> = [
  ['takes X-OC-Mtime', { product: 'none', mtimeHeader: true }, 'x-oc-mtime'],
  ['accepts PROPPATCH of getlastmodified', { product: 'none', mtimeHeader: false, mtimeProppatch: true }, 'proppatch'],
];

describe.each(keepers)('a generic WebDAV server that %s', (_what, options, method) => {
  let server: NextcloudEmulator;
  let dav: WebdavProvider;
  const { ctx, state } = context();

  beforeAll(async () => {
    server = await startNextcloudEmulator(options);
    dav = await openWebdav({ url: server.url, username: server.username, password: server.password }, ctx);
  });
  afterAll(async () => {
    await dav?.close();
    await server?.stop();
  });

  it('is found out and recorded: setModTime true', () => {
    expect([dav.vendor, dav.mtime, dav.features.setModTime]).toEqual(['other', method, true]);
    expect(recorded(state)?.method).toBe(method);
  });

  it('keeps the source’s time on a plain upload (through a temporary file), in the entry and the listing', async () => {
    const e = await put(dav, '/Docs/plain.txt', 'plain', THEN);
    expect(e.modTime?.getTime()).toBe(THEN.getTime());
    const listed = (await dav.list('/Docs')).entries.find((x) => x.name === 'plain.txt');
    expect(listed?.modTime?.getTime()).toBe(THEN.getTime());
    // A new version keeps the new version's time.
    expect((await put(dav, '/Docs/plain.txt', 'plain, again', LATER)).modTime?.getTime()).toBe(LATER.getTime());
    expect(dav.features.setModTime).toBe(true);
  });

  it('keeps it on a file written in ranges', async () => {
    const e = await putChunked(dav, '/Docs/ranged.bin', 9 * 1024 * 1024, THEN);
    expect(e.size).toBe(9 * 1024 * 1024);
    expect(e.modTime?.getTime()).toBe(THEN.getTime());
    expect(dav.features.setModTime).toBe(true);
  });

  it('opening the cloud again asks the server nothing more about times', async () => {
    const before = server.requests.length;
    const again = await openWebdav({ url: server.url, username: server.username, password: server.password }, ctx);
    try {
      expect(again.mtime).toBe(method);
      expect(server.requests.slice(before).filter((r) => r.startsWith('PUT') || r.startsWith('PROPPATCH'))).toEqual([]);
    } finally {
      await again.close();
    }
  });
});

describe('a generic server that keeps times by PROPPATCH only', () => {
  let server: NextcloudEmulator;
  let dav: WebdavProvider;
  beforeAll(async () => {
    server = await startNextcloudEmulator({ product: 'none', mtimeHeader: false, mtimeProppatch: true });
    dav = await openWebdav({ url: server.url, username: server.username, password: server.password }, context().ctx);
  });
  afterAll(async () => {
    await dav?.close();
    await server?.stop();
  });

  it('gives a server-side copy its source’s time too', async () => {
    const src = await put(dav, '/c/orig.txt', 'orig', THEN);
    const copy = await dav.copy(src, '/c/copy.txt');
    expect(copy.modTime?.getTime()).toBe(THEN.getTime());
  });
});
