import { describe, expect, it } from 'vitest';
import { LocalTaskStatus } from '@skyferry/contract';
import { anyRunning, statusView, taskDisplayName } from './store.ts';

describe('task panel rules', () => {
  it('maps the four statuses: 0 progress with its percentage, 1 done, -1 failed with retry, -2 failed', () => {
    expect(statusView({ status: LocalTaskStatus.progressing, progress: 42.7 })).toEqual({
      kind: 'progress',
      percent: 42,
    });
    expect(statusView({ status: LocalTaskStatus.completed, progress: 100 })).toEqual({ kind: 'done' });
    expect(statusView({ status: LocalTaskStatus.failedRetry, progress: 3 })).toEqual({ kind: 'failed', retry: true });
    expect(statusView({ status: LocalTaskStatus.failed, progress: 3 })).toEqual({ kind: 'failed', retry: false });
  });

  it('shortens names over 23 columns to the first 7 characters, "..." and the last 6', () => {
    expect(taskDisplayName({ name: 'holiday-photos-2024-final.zip' })).toBe('holiday...al.zip');
    expect(taskDisplayName({ name: 'short name.txt' })).toBe('short name.txt');
    expect(taskDisplayName({ name: '写真写真写真写真写真写真.jpg' })).toBe('写真写真写真写...写真.jpg');
  });

  it('asks before clearing only while a task still runs', () => {
    expect(anyRunning([{ status: 1 }, { status: -1 }] as never)).toBe(false);
    expect(anyRunning([{ status: 1 }, { status: 0 }] as never)).toBe(true);
  });
});
