import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { DesktopDownload } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { DownloadManager, safeFileName, uniquePath, type DownloadItemLike } from './downloads.ts';

class FakeItem extends EventEmitter implements DownloadItemLike {
  savePath = '';
  received = 0;
  private readonly url: string;
  private readonly filename: string;
  private readonly total: number;
  constructor(url: string, filename: string, total: number) {
    super();
    this.url = url;
    this.filename = filename;
    this.total = total;
  }
  getURL = () => this.url;
  getFilename = () => this.filename;
  getTotalBytes = () => this.total;
  getReceivedBytes = () => this.received;
  setSavePath = (p: string) => {
    this.savePath = p;
  };
  progress(n: number) {
    this.received = n;
    this.emit('updated', {}, 'progressing');
  }
  finish(state: 'completed' | 'cancelled' | 'interrupted') {
    this.emit('done', {}, state);
  }
}

function manager(existing: string[] = []) {
  const events: DesktopDownload[] = [];
  const remembered: string[] = [];
  const m = new DownloadManager({
    downloadDir: () => '/home/me/Downloads',
    emit: (d) => events.push(d),
    remember: (p) => remembered.push(p),
    exists: (p) => existing.includes(p),
  });
  return { m, events, remembered };
}

describe('downloads', () => {
  it('makes names safe on every system', () => {
    expect(safeFileName('../../.bashrc')).toBe('.bashrc');
    expect(safeFileName('C:\\Windows\\evil.exe')).toBe('evil.exe');
    expect(safeFileName('a<b>c:"d|e?f*.txt')).toBe('a_b_c__d_e_f_.txt');
    expect(safeFileName('CON.txt')).toBe('_CON.txt');
    expect(safeFileName('name. . ')).toBe('name');
    expect(safeFileName('..')).toBe('download');
    expect(safeFileName('tab\there')).toBe('tab_here');
    const long = safeFileName(`${'x'.repeat(300)}.jpeg`);
    expect(long).toHaveLength(200);
    expect(long.endsWith('.jpeg')).toBe(true);
  });

  it('never overwrites: report.pdf, report (1).pdf, report (2).pdf', () => {
    const taken = new Set(['/d/report.pdf', '/d/report (1).pdf']);
    expect(uniquePath('/d', 'report.pdf', (p) => taken.has(p))).toBe(join('/d', 'report (2).pdf'));
    expect(uniquePath('/d', 'notes', () => false)).toBe(join('/d', 'notes'));
  });

  it('saves an expected download into the folder asked for, reports progress, and remembers it', async () => {
    const { m, events, remembered } = manager();
    const done = m.expect('http://127.0.0.1:4100/dl?sig=1', 'photo.jpg', '/media/export');
    const item = new FakeItem('http://127.0.0.1:4100/dl?sig=1', 'server-name.jpg', 100);
    m.handle(item);
    expect(item.savePath).toBe(join('/media/export', 'photo.jpg'));
    item.progress(40);
    item.finish('completed');
    const result = await done;
    expect(result).toMatchObject({ name: 'photo.jpg', path: join('/media/export', 'photo.jpg'), state: 'completed' });
    expect(events.map((e) => [e.state, e.received])).toEqual([
      ['progressing', 0],
      ['progressing', 40],
      ['completed', 40],
    ]);
    expect(remembered).toEqual([join('/media/export', 'photo.jpg')]);
  });

  it('puts other downloads in the download folder under the name the server gave, one name each', () => {
    const { m } = manager(['/home/me/Downloads/a.zip']);
    const first = new FakeItem('http://x/1', 'a.zip', 1);
    const second = new FakeItem('http://x/2', 'a.zip', 1);
    m.handle(first);
    m.handle(second);
    expect(first.savePath).toBe(join('/home/me/Downloads', 'a (1).zip'));
    expect(second.savePath).toBe(join('/home/me/Downloads', 'a (2).zip'));
  });

  it('rejects the wait of a download that fails or is canceled, and does not remember it', async () => {
    const { m, remembered } = manager();
    const failing = m.expect('http://x/f', 'f.bin');
    const item = new FakeItem('http://x/f', 'f.bin', 10);
    m.handle(item);
    item.finish('interrupted');
    await expect(failing).rejects.toThrow('The download failed.');
    const canceled = m.expect('http://x/c', 'c.bin');
    const other = new FakeItem('http://x/c', 'c.bin', 10);
    m.handle(other);
    other.finish('cancelled');
    await expect(canceled).rejects.toThrow('canceled');
    expect(remembered).toEqual([]);
  });

  it('fails the wait of a download that never begins', async () => {
    const m = new DownloadManager({
      downloadDir: () => '/d',
      emit: () => undefined,
      remember: () => undefined,
      startTimeoutMs: 20,
    });
    await expect(m.expect('http://x/never', 'n.bin')).rejects.toThrow('The download did not start.');
    // A later download of the same address is not taken for it.
    const item = new FakeItem('http://x/never', 'server.bin', 1);
    m.handle(item);
    expect(item.savePath).toBe(join('/d', 'server.bin'));
  });
});
