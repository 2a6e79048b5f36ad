import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dropboxContentHash, DropboxEmulator } from '@skyferry/testing';
import type { ProviderError } from '../../api/errors.ts';
import type { Entry } from '../../api/types.ts';
import { patternBytes, readAll } from '../../testkit/index.ts';
import { startEmulatedService, type EmulatedService } from '../oauth-common/emulated.ts';
import { OAUTH_KINDS } from '../oauth-common/services.ts';
import '../index.ts';

// Dropbox batch commits (upload_session/finish_batch_v2, delete_batch + delete_batch/check)
// against the emulator built from Dropbox's published API v2 documentation, with its namespace
// write lock on: a single commit holds the lock for `writeLockMs`, and a commit arriving meanwhile
// is refused with too_many_write_operations (429, Retry-After 1 s), as Dropbox does.

const CI = Boolean(process.env.CI);
const FILES = CI ? 150 : 400;

const codeOf = (r: PromiseSettledResult<unknown>) =>
  r.status === 'rejected' ? (r.reason as ProviderError).code : 'ok';

describe('dropbox batch commits (emulated, namespace write lock on)', () => {
  let svc: EmulatedService<DropboxEmulator>;
  beforeEach(async () => {
    svc = await startEmulatedService({
      kind: 'dropbox',
      service: 'dropbox',
      scopes: OAUTH_KINDS.dropbox!.scopes,
      make: (oauth) => new DropboxEmulator({ oauth }),
    });
    svc.emulator.writeLockMs = 25;
  });
  afterEach(async () => {
    await svc.close();
  });

  it('commits many concurrent small puts through few finish batches, each put with its own entry', async () => {
    // A 100 ms window: on a loaded machine the puts' sessions close further apart than the default 10 ms.
    const p = await svc.open({ batch_timeout_ms: 100 });
    const data = Array.from({ length: FILES }, (_, i) => patternBytes(100 + ((i * 37) % 3000), i + 1));
    const entries = await Promise.all(
      data.map((d, i) => p.put(`/many/f${i}.bin`, Readable.from([d]), { size: d.length })),
    );
    const emu = svc.emulator;
    // Far fewer commits than files, none of them single, and no write contention at all.
    expect(emu.finishBatchCalls).toBeGreaterThan(0);
    expect(emu.finishBatchCalls).toBeLessThanOrEqual(Math.ceil(FILES / 10));
    expect(emu.finishBatchSizes.reduce((a, b) => a + b, 0)).toBe(FILES);
    expect(emu.finishCalls).toBe(0);
    expect(emu.requests.filter((r) => r.path === '/2/files/upload')).toHaveLength(0);
    expect(emu.writeConflicts).toBe(0);
    // Every put resolved with the entry of its own file, and the stored bytes match.
    const stored = emu.filesUnder(svc.user, '/many');
    expect(stored.size).toBe(FILES);
    entries.forEach((e: Entry, i) => {
      expect(e.path).toBe(`/many/f${i}.bin`);
      expect(e.size).toBe(data[i]!.length);
      expect(e.hashes?.dropbox).toBe(dropboxContentHash(data[i]!));
      expect(stored.get(`/f${i}.bin`)?.equals(data[i]!)).toBe(true);
    });
    expect((await p.stat('/many/f7.bin')).hashes?.dropbox).toBe(dropboxContentHash(data[7]!));
  });

  it('without batching the same concurrent puts meet too_many_write_operations (and still land after waiting)', async () => {
    const p = await svc.open({ batch_size: 0 });
    const data = Array.from({ length: 6 }, (_, i) => patternBytes(500 + i, i + 3));
    await Promise.all(data.map((d, i) => p.put(`/single/f${i}.bin`, Readable.from([d]), { size: d.length })));
    expect(svc.emulator.writeConflicts).toBeGreaterThan(0);
    expect(svc.emulator.requests.some((r) => r.status === 429)).toBe(true);
    expect(svc.emulator.finishBatchCalls).toBe(0);
    expect(svc.emulator.filesUnder(svc.user, '/single').size).toBe(6);
  });

  it('keeps batches within batch_size, and big files (sessions) finish in the batches too', async () => {
    const p = await svc.open({ batch_size: 7, chunk_size: 4 * 1024 * 1024 });
    const big = patternBytes(4 * 1024 * 1024 + 123, 5);
    const small = Array.from({ length: 20 }, (_, i) => patternBytes(10 + i, i));
    const [bigEntry] = await Promise.all([
      p.put('/mix/big.bin', Readable.from([big]), { size: big.length }),
      ...small.map((d, i) => p.put(`/mix/s${i}.txt`, Readable.from([d]), { size: d.length })),
    ]);
    expect(bigEntry.hashes?.dropbox).toBe(dropboxContentHash(big));
    expect(svc.emulator.appendCalls).toBeGreaterThan(0);
    expect(Math.max(...svc.emulator.finishBatchSizes)).toBeLessThanOrEqual(7);
    expect(svc.emulator.finishBatchSizes.reduce((a, b) => a + b, 0)).toBe(21);
    expect(svc.emulator.finishCalls).toBe(0);
    expect((await readAll(await p.openRead('/mix/big.bin'))).equals(big)).toBe(true);
  });

  it('a failing entry fails only its own put', async () => {
    const p = await svc.open({});
    svc.emulator.seed(svc.user, '/f/blocker', Buffer.from('a file, not a folder'));
    const ok = Array.from({ length: 12 }, (_, i) => Buffer.from(`file ${i}`));
    const results = await Promise.allSettled([
      ...ok.map((d, i) => p.put(`/f/ok${i}.txt`, Readable.from([d]), { size: d.length })),
      // Its parent is a file: Dropbox refuses that entry with path/conflict/file.
      p.put('/f/blocker/child.txt', Readable.from([Buffer.from('x')]), { size: 1 }),
    ]);
    expect(results.map(codeOf)).toEqual([...ok.map(() => 'ok'), 'exists']);
    // It travelled in a batch with the others (fewer batches than puts).
    expect(svc.emulator.finishBatchCalls).toBeLessThan(13);
    expect(svc.emulator.finishBatchSizes.reduce((a, b) => a + b, 0)).toBe(13);
    const stored = svc.emulator.filesUnder(svc.user, '/f');
    expect([...stored.keys()].sort()).toEqual(['/blocker', ...ok.map((_, i) => `/ok${i}.txt`)].sort());
    expect(stored.get('/blocker')?.toString()).toBe('a file, not a folder');
  });

  it('a put cancelled while its commit waits for the batch is left out of it; the others commit', async () => {
    const p = await svc.open({ batch_timeout_ms: 400 });
    const ac = new AbortController();
    const cancelled = p.put(
      '/c/cancelled.txt',
      Readable.from([Buffer.from('no')]),
      { size: 2 },
      {
        signal: ac.signal,
        // The bytes are in a closed session; the commit now waits in the batch window.
        onProgress: () => setTimeout(() => ac.abort(), 20),
      },
    );
    const kept = p.put('/c/kept.txt', Readable.from([Buffer.from('yes')]), { size: 3 });
    const t = Date.now();
    await expect(cancelled).rejects.toMatchObject({ code: 'canceled' });
    expect(Date.now() - t).toBeLessThan(350);
    expect((await kept).hashes?.dropbox).toBe(dropboxContentHash(Buffer.from('yes')));
    expect(svc.emulator.finishBatchSizes).toEqual([1]);
    expect([...svc.emulator.filesUnder(svc.user, '/c').keys()]).toEqual(['/kept.txt']);
    await expect(p.stat('/c/cancelled.txt')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('removals requested together go through delete_batch jobs, each with its own result', async () => {
    const p = await svc.open({});
    const n = CI ? 40 : 120;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        p.put(`/d/f${i}.txt`, Readable.from([Buffer.from(`${i}`)]), { size: `${i}`.length }),
      ),
    );
    const removed = await Promise.allSettled([
      ...Array.from({ length: n }, (_, i) => p.remove(`/d/f${i}.txt`)),
      // The same file twice in one batch: the second entry finds nothing.
      p.remove('/d/f0.txt'),
    ]);
    expect(removed.map(codeOf)).toEqual([...Array.from({ length: n }, () => 'ok'), 'not_found']);
    const emu = svc.emulator;
    expect(emu.deleteV2Calls).toBe(0);
    expect(emu.deleteBatchCalls).toBeGreaterThan(0);
    expect(emu.deleteBatchCalls).toBeLessThanOrEqual(Math.ceil(n / 10));
    // The async jobs were polled with delete_batch/check until complete.
    expect(emu.checkCalls).toBeGreaterThanOrEqual(emu.deleteBatchCalls);
    expect(emu.writeConflicts).toBe(0);
    expect(emu.filesUnder(svc.user, '/d').size).toBe(0);
    expect(emu.deleted.filter((d) => d.path.startsWith('/d/'))).toHaveLength(n);
    // trash() batches the same way (Dropbox's deleted files are the trash).
    await p.put('/d/t.txt', Readable.from([Buffer.from('t')]), { size: 1 });
    await p.trash!('/d/t.txt');
    expect(emu.deleted.map((d) => d.path)).toContain('/d/t.txt');
  });

  it('the emulator answers finish_batch (v1) with an async job, polled with finish_batch/check', async () => {
    const token = String(svc.credentials().access_token);
    const call = async (name: string, body: unknown, arg?: unknown, data?: Buffer) => {
      const r = await fetch(`${svc.emulator.url}/2/${name}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': arg ? 'application/octet-stream' : 'application/json',
          ...(arg ? { 'dropbox-api-arg': JSON.stringify(arg) } : {}),
        },
        body: arg ? (data ?? Buffer.alloc(0)) : JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as Record<string, unknown> };
    };
    const closed = await call('files/upload_session/start', null, { close: true }, Buffer.from('hello'));
    const open = await call('files/upload_session/start', null, { close: false }, Buffer.from('open'));
    const launch = await call('files/upload_session/finish_batch', {
      entries: [
        { cursor: { session_id: closed.json.session_id, offset: 5 }, commit: { path: '/v1/a.txt' } },
        { cursor: { session_id: open.json.session_id, offset: 4 }, commit: { path: '/v1/b.txt' } },
      ],
    });
    expect(launch.json['.tag']).toBe('async_job_id');
    const first = await call('files/upload_session/finish_batch/check', { async_job_id: launch.json.async_job_id });
    expect(first.json['.tag']).toBe('in_progress');
    let status = first;
    for (let i = 0; i < 50 && status.json['.tag'] === 'in_progress'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      status = await call('files/upload_session/finish_batch/check', { async_job_id: launch.json.async_job_id });
    }
    const entries = status.json.entries as Array<Record<string, unknown>>;
    expect(status.json['.tag']).toBe('complete');
    expect(entries[0]).toMatchObject({ '.tag': 'success', path_display: '/v1/a.txt', size: 5 });
    // A session whose last call did not close it cannot be finished in a batch.
    expect(entries[1]).toMatchObject({
      '.tag': 'failure',
      failure: { '.tag': 'lookup_failed', lookup_failed: { '.tag': 'not_closed' } },
    });
    const bad = await call('files/upload_session/finish_batch/check', { async_job_id: 'dbjid:nope' });
    expect(bad.status).toBe(409);
    expect(String(bad.json.error_summary)).toMatch(/^invalid_async_job_id\//);
  });
});
