import { Code, UPLOAD_PART_SIZE } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NetworkError } from '../../api/client.ts';
import { Fail, mockApi, type RecordedCall } from '../../test/utils.tsx';
import { PART_RETRIES, resetRunner, retryTask, startUploads, uploadFile } from './runner.ts';
import { taskPanelStore } from './store.ts';

// Only the clock of the waits between tries is fake; the mocked fetch answers at once.
beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
afterEach(() => {
  resetRunner();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const SIZE = UPLOAD_PART_SIZE * 2 + 100;
const bigFile = () => new File([new Uint8Array(SIZE)], 'big.bin', { lastModified: 1_700_000_000_000 });

/** Lets the upload run, moving the fake clock on while it waits between tries. */
async function settle<T>(work: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let out: { value?: T; error?: unknown } | undefined;
  work.then(
    (value) => (out = { value }),
    (error: unknown) => (out = { error }),
  );
  for (let i = 0; i < 400 && !out; i += 1) {
    await vi.advanceTimersByTimeAsync(500);
    await new Promise((r) => setImmediate(r));
  }
  if (!out) throw new Error('the upload did not settle');
  return out;
}

/**
 * A server of one resumable upload: it holds `taken` bytes; `dropPart(offset, attempt)` says
 * whether the PUT of that part (its nth attempt) loses the connection; `statusDown(n)` whether the
 * nth status call does.
 */
function server(opts: {
  dropPart?: (offset: number, attempt: number) => boolean;
  statusDown?: (n: number) => boolean;
}) {
  let taken = 0;
  const attempts = new Map<number, number>();
  let statusCalls = 0;
  const api = mockApi({
    'POST /api/cloud-manager/uploads': (c: RecordedCall) => ({
      upload_id: 'up1',
      offset: 0,
      part_size: UPLOAD_PART_SIZE,
      size: (c.body as { size: number }).size,
      expires_at: Date.now() + 3_600_000,
    }),
    'PUT /api/cloud-manager/uploads/up1': (c: RecordedCall) => {
      const offset = Number(c.query.get('offset'));
      const attempt = (attempts.get(offset) ?? 0) + 1;
      attempts.set(offset, attempt);
      if (opts.dropPart?.(offset, attempt)) throw new TypeError('Failed to fetch');
      if (offset > taken) return new Fail(Code.CONFLICT, 'gap', 409);
      taken = Math.max(taken, Math.min(SIZE, offset + UPLOAD_PART_SIZE));
      return { offset: taken };
    },
    'GET /api/cloud-manager/uploads/up1': () => {
      statusCalls += 1;
      if (opts.statusDown?.(statusCalls)) throw new TypeError('Failed to fetch');
      return { upload_id: 'up1', offset: taken, part_size: UPLOAD_PART_SIZE, size: SIZE, expires_at: 0 };
    },
    'POST /api/cloud-manager/uploads/up1/complete': () => ({
      id: '/d/big.bin',
      name: 'big.bin',
      path: '/d/big.bin',
      type: 1,
      size: SIZE,
      modified: 0,
      mime_type: null,
    }),
    'DELETE /api/cloud-manager/uploads/up1': () => null,
    'PUT /api/cloud-manager/files': () => ({}),
  });
  const partOffsets = () => api.find('PUT /api/cloud-manager/uploads/up1').map((c) => Number(c.query.get('offset')));
  return { api, partOffsets };
}

describe('uploads from the browser', () => {
  it('sends a file of one part or less with one plain PUT, with its modified time', async () => {
    const { api } = server({});
    const file = new File(['hello'], 'a.txt', { lastModified: 1_600_000_000_000 });
    const sent: number[] = [];
    await uploadFile('c1', '/d/a.txt', file, (n) => sent.push(n), new AbortController().signal);
    const [put] = api.find('PUT /api/cloud-manager/files');
    expect(put?.query.get('cloud_id')).toBe('c1');
    expect(put?.query.get('path')).toBe('/d/a.txt');
    expect(put?.query.get('modified')).toBe('1600000000000');
    expect(api.find('POST /api/cloud-manager/uploads')).toHaveLength(0);
    expect(sent).toEqual([5]);
  });

  it('sends a larger file in 4 MB parts and completes it', async () => {
    const { api, partOffsets } = server({});
    const sent: number[] = [];
    const r = await settle(
      uploadFile('c1', '/d/big.bin', bigFile(), (n) => sent.push(n), new AbortController().signal),
    );
    expect(r.error).toBeUndefined();
    expect(api.find('POST /api/cloud-manager/uploads')[0]?.body).toMatchObject({
      cloud_id: 'c1',
      path: '/d/big.bin',
      size: SIZE,
      modified: 1_700_000_000_000,
    });
    expect(partOffsets()).toEqual([0, UPLOAD_PART_SIZE, UPLOAD_PART_SIZE * 2]);
    expect(sent).toEqual([UPLOAD_PART_SIZE, UPLOAD_PART_SIZE * 2, SIZE]);
    expect(api.find('POST /api/cloud-manager/uploads/up1/complete')).toHaveLength(1);
  });

  it('after a dropped connection, asks the server where to resume and goes on from there', async () => {
    const { api, partOffsets } = server({
      dropPart: (offset, attempt) => offset === UPLOAD_PART_SIZE && attempt === 1,
    });
    const r = await settle(uploadFile('c1', '/d/big.bin', bigFile(), () => undefined, new AbortController().signal));
    expect(r.error).toBeUndefined();
    expect(partOffsets()).toEqual([0, UPLOAD_PART_SIZE, UPLOAD_PART_SIZE, UPLOAD_PART_SIZE * 2]);
    expect(api.find('GET /api/cloud-manager/uploads/up1')).toHaveLength(1);
    expect(api.find('POST /api/cloud-manager/uploads/up1/complete')).toHaveLength(1);
    expect(api.find('DELETE /api/cloud-manager/uploads/up1')).toHaveLength(0);
  });

  it('rides out an outage longer than the first wait (the status call fails too), then finishes', async () => {
    const { api, partOffsets } = server({
      dropPart: (offset, attempt) => offset === UPLOAD_PART_SIZE && attempt <= 2,
      statusDown: (n) => n === 1,
    });
    const r = await settle(uploadFile('c1', '/d/big.bin', bigFile(), () => undefined, new AbortController().signal));
    expect(r.error).toBeUndefined();
    expect(partOffsets()).toEqual([0, UPLOAD_PART_SIZE, UPLOAD_PART_SIZE, UPLOAD_PART_SIZE, UPLOAD_PART_SIZE * 2]);
    expect(api.find('GET /api/cloud-manager/uploads/up1')).toHaveLength(2);
    expect(api.find('POST /api/cloud-manager/uploads/up1/complete')).toHaveLength(1);
    expect(api.find('DELETE /api/cloud-manager/uploads/up1')).toHaveLength(0);
  });

  it(`gives up after ${PART_RETRIES} retries of a part and abandons the upload on the server`, async () => {
    const { api, partOffsets } = server({ dropPart: (offset) => offset === UPLOAD_PART_SIZE });
    const r = await settle(uploadFile('c1', '/d/big.bin', bigFile(), () => undefined, new AbortController().signal));
    expect(r.error).toBeInstanceOf(NetworkError);
    expect(partOffsets().filter((o) => o === UPLOAD_PART_SIZE)).toHaveLength(PART_RETRIES + 1);
    expect(api.find('POST /api/cloud-manager/uploads/up1/complete')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(api.find('DELETE /api/cloud-manager/uploads/up1')).toHaveLength(1);
  });

  it('a failed upload task is status -1 (retry) and a retry completes it (status 1)', async () => {
    let fail = true;
    const api = mockApi({
      'PUT /api/cloud-manager/files': () =>
        fail ? new Fail(Code.CLOUD_OPERATION_ERROR, 'Cloud Drive operation error! [500]', 500) : {},
    });
    const file = new File(['x'], 'x.txt');
    const [task] = await startUploads('c1', '/d', { files: [{ file, relativePath: 'x.txt' }], emptyFolders: [] });
    const status = () => taskPanelStore.getState().tasks.find((t) => t.id === task?.id);
    await vi.waitFor(() => expect(status()?.status).toBe(-1));
    expect(status()?.error).toBe('Cloud Drive operation error! [500]');
    fail = false;
    retryTask(task?.id ?? '');
    await vi.waitFor(() => expect(status()?.status).toBe(1));
    expect(api.find('PUT /api/cloud-manager/files')).toHaveLength(2);
  });
});
