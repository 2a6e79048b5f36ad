import { Code, UPLOAD_PART_SIZE, formatBytes } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NetworkError } from '../../api/client.ts';
import { Fail, mockApi, type RecordedCall } from '../../test/utils.tsx';
import { PART_RETRIES, resetRunner, retryTask, startDownload, startUploads, uploadFile } from './runner.ts';
import { patchSettings } from '../session/store.ts';
import { taskPanelStore } from './store.ts';

// The browser's side of a download (a hidden frame and a cookie) is tested in browser-download.test.ts;
// here the server begins sending every link at once.
const handedOver = vi.hoisted(() => [] as string[]);
vi.mock('./browser-download.ts', () => ({
  browserDownload: (url: string) => {
    handedOver.push(url);
    return Promise.resolve({ started: true });
  },
}));

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

describe('the local task record (spec section 3: ENT-TSK-12, ENT-TSK-13)', () => {
  it('an upload keeps its place in the batch, its request, the picked file and what it has sent', async () => {
    mockApi({ 'PUT /api/cloud-manager/files': () => ({}) });
    const a = new File(['aaaa'], 'a.txt', { type: 'text/plain', lastModified: 1_700_000_000_000 });
    const b = new File(['bb'], 'b.png', { type: 'image/png', lastModified: 1_600_000_000_000 });
    const tasks = await startUploads('c1', '/Docs', {
      files: [
        { file: a, relativePath: 'a.txt' },
        { file: b, relativePath: 'Pics/b.png' },
      ],
      emptyFolders: [],
    });
    expect(tasks.map((t) => [t.real_index, t.is_multi, t.downloadId, t.directory])).toEqual([
      [0, false, '', ''],
      [1, false, '', ''],
    ]);
    expect(tasks[1]?.task_object).toEqual({
      kind: 'upload',
      cloud_id: 'c1',
      folder: '/Docs',
      relative_path: 'Pics/b.png',
    });
    expect(tasks[1]?.object).toEqual({ name: 'b.png', size: 2, type: 'image/png', modified: 1_600_000_000_000 });
    const stored = () => taskPanelStore.getState().tasks.find((t) => t.id === tasks[0]?.id);
    await vi.waitFor(() => expect(stored()?.status).toBe(1));
    expect(stored()?.progress_text).toBe(`${formatBytes(4)} / ${formatBytes(4)}`);
  });

  it('a download of several items is multi, saved to the settings’ file save path, with its request and first item', async () => {
    mockApi({
      'POST /api/cloud-manager/download-link': () => ({ url: '/api/cloud-manager/files?link=x', expires_at: 1 }),
    });
    handedOver.length = 0;
    patchSettings({ file_save_path: 'D:\\Downloads\\Skyferry' });
    try {
      const items = [
        { path: '/Docs/a.txt', name: 'a.txt', size: 4, type: 1, modified: 1_700_000_000_000 },
        { path: '/Docs/Pics', name: 'Pics', size: 0, type: 0, modified: 0 },
      ];
      const task = await startDownload('c1', '/Docs', items, 'Docs');
      const stored = taskPanelStore.getState().tasks.find((t) => t.id === task.id);
      expect(stored).toMatchObject({
        type: 1,
        status: 1,
        is_multi: true,
        real_index: 0,
        directory: 'D:\\Downloads\\Skyferry',
        task_object: {
          kind: 'download',
          cloud_id: 'c1',
          folder: '/Docs',
          paths: ['/Docs/a.txt', '/Docs/Pics'],
          zip_name: 'Docs',
        },
        object: { name: 'a.txt', size: 4, type: 'file', modified: 1_700_000_000_000 },
        progress_text: `${formatBytes(4)} / ${formatBytes(4)}`,
      });
      expect(stored?.downloadId).not.toBe('');
      expect(handedOver).toEqual(['/api/cloud-manager/files?link=x']);
      const one = await startDownload('c1', '/Docs', [items[0] as (typeof items)[number]]);
      expect(taskPanelStore.getState().tasks.find((t) => t.id === one.id)).toMatchObject({
        is_multi: false,
        task_object: { zip_name: null },
      });
    } finally {
      patchSettings({ file_save_path: '' });
    }
  });
});
