import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExportStatus, type ExportProgress } from '@skyferry/contract';
import { cloud } from '../../test/utils.tsx';
import { DEFAULT_EXPORT_SETTINGS } from '../settings/preferences.ts';
import {
  exportDecision,
  exportTargets,
  groupByAccount,
  runExport,
  startUploadBody,
  type ExportCalls,
} from './model.ts';

const progress = (status: 0 | 1 | -2, percent: number): ExportProgress => ({
  task_id: 't1',
  status,
  percent,
  file_name: 'a.png',
  path: '/Skyferry/a.png',
  cloud_id: 'c1',
  size: 10,
  transferred: percent / 10,
  error: null,
});

const body = { token_id: 'c1', file_name: 'a.png', base64_data: 'AA==' };

afterEach(() => {
  vi.useRealTimers();
});

describe('export decision (spec section 6, Export)', () => {
  const targets = [cloud('c1'), cloud('c2')];
  it('opens the dialog unless "don\'t remind again" is saved', () => {
    expect(exportDecision({ ...DEFAULT_EXPORT_SETTINGS, defaultCloudId: 'c1' }, targets)).toEqual({
      kind: 'dialog',
      clearDefault: false,
    });
  });
  it('exports silently to a saved default cloud that is still connected (and locally when saved)', () => {
    const settings = { ...DEFAULT_EXPORT_SETTINGS, closeExportPanel: true, defaultCloudId: 'c2', saveToLocal: true };
    expect(exportDecision(settings, targets)).toEqual({ kind: 'silent', target: { local: true, cloudId: 'c2' } });
  });
  it('clears a saved default cloud that is gone and opens the dialog', () => {
    const settings = { ...DEFAULT_EXPORT_SETTINGS, closeExportPanel: true, defaultCloudId: 'gone', saveToLocal: true };
    expect(exportDecision(settings, targets)).toEqual({ kind: 'dialog', clearDefault: true });
  });
  it('save-to-local false and no default cloud: the dialog opens', () => {
    expect(exportDecision({ ...DEFAULT_EXPORT_SETTINGS, closeExportPanel: true }, targets).kind).toBe('dialog');
    expect(exportDecision({ ...DEFAULT_EXPORT_SETTINGS, closeExportPanel: true, saveToLocal: true }, targets)).toEqual({
      kind: 'silent',
      target: { local: true, cloudId: null },
    });
  });
});

describe('export targets', () => {
  it('offers a photos cloud only when every file is a picture or a video, and never an expired or read-only cloud', () => {
    const clouds = [
      cloud('drive'),
      cloud('photos', { cloud_name: 'google_photos', photos: true }),
      cloud('old', { status: 'expired' }),
      cloud('shared', { cloud_name: 'google_drive_shared', shared: true, flags: 1 }),
    ];
    expect(exportTargets(clouds, [{ filename: 'a.pdf' }]).map((c) => c.id)).toEqual(['drive']);
    expect(exportTargets(clouds, [{ filename: 'a.jpg' }, { filename: 'b.mp4' }]).map((c) => c.id)).toEqual([
      'drive',
      'photos',
    ]);
  });
  it('groups clouds by kind, each account a choice', () => {
    const groups = groupByAccount([cloud('a'), cloud('b', { cloud_name: 'local' }), cloud('c')]);
    expect(groups.map((g) => [g.kind, g.clouds.map((c) => c.id)])).toEqual([
      ['webdav', ['a', 'c']],
      ['local', ['b']],
    ]);
  });
});

describe('start-upload body', () => {
  it('sends base64_data without its data-URL prefix, or the download_url', () => {
    const c = cloud('c1', { cloud_name: 'webdav' });
    expect(
      startUploadBody({ filename: 'a.png', filesize: 3, base64_data: 'data:image/png;base64,AAAA' }, c, '/Skyferry'),
    ).toMatchObject({
      cloud_type: 'webdav',
      token_id: 'c1',
      file_name: 'a.png',
      file_size: 3,
      parent: '/Skyferry',
      base64_data: 'AAAA',
    });
    const byUrl = startUploadBody({ filename: 'a.png', download_url: 'https://x/a.png' }, c, '/Skyferry');
    expect(byUrl).toMatchObject({ download_url: 'https://x/a.png' });
    expect(byUrl).not.toHaveProperty('base64_data');
    expect(startUploadBody({ filename: 'a.png' }, c, '/')).toBeNull();
  });
});

describe('export task status (ST-EXP)', () => {
  const calls = (
    poll: Array<ExportProgress | Error | null>,
    start: () => Promise<{ task_id: string }> = async () => ({ task_id: 't1' }),
  ) => {
    const queue = [...poll];
    const c: ExportCalls & { polls: number } = {
      polls: 0,
      startUpload: vi.fn(start),
      pollProgress: vi.fn(async () => {
        c.polls += 1;
        const next = queue.shift();
        if (next instanceof Error) throw next;
        return next as ExportProgress;
      }),
    };
    return c;
  };

  it('polls once a second until the percent reaches 100: status 1', async () => {
    vi.useFakeTimers();
    const c = calls([progress(0, 0), progress(0, 50), progress(0, 100)]);
    const seen: number[] = [];
    const run = runExport(body, c, (p) => seen.push(p));
    await vi.advanceTimersByTimeAsync(999);
    expect(c.polls).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(c.polls).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(c.polls).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(run).resolves.toBe(ExportStatus.success);
    expect(seen).toEqual([0, 50, 100]);
  });

  it('a failed export (status -2 in the poll) is -2', async () => {
    const c = calls([progress(0, 10), progress(-2, 10)]);
    await expect(runExport(body, c, undefined, async () => undefined)).resolves.toBe(ExportStatus.failed);
  });

  it('no data, a failed start, an empty reply or a thrown error are all -2', async () => {
    const wait = async () => undefined;
    expect(await runExport(null, calls([]), undefined, wait)).toBe(ExportStatus.failed);
    const failedStart = calls([], async () => {
      throw new Error('500');
    });
    expect(await runExport(body, failedStart, undefined, wait)).toBe(ExportStatus.failed);
    expect(failedStart.polls).toBe(0);
    expect(await runExport(body, calls([null]), undefined, wait)).toBe(ExportStatus.failed);
    expect(await runExport(body, calls([new Error('network')]), undefined, wait)).toBe(ExportStatus.failed);
    expect(
      await runExport(
        body,
        calls([], async () => ({ task_id: '' })),
        undefined,
        wait,
      ),
    ).toBe(ExportStatus.failed);
  });
});
