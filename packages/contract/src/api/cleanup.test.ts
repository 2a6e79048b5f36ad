import { describe, expect, it } from 'vitest';
import {
  CLEANUP_IMODE_DEFAULT,
  LARGE_FILE_THRESHOLD_DEFAULT,
  PAGE_SIZES,
  cleanupListQuerySchema,
  deleteCleanupBodySchema,
  runCleanupBodySchema,
} from '../index.ts';

describe('clean-up call schemas', () => {
  it('runs all three scans of the whole cloud by default (imode 7, 100 MB large files)', () => {
    expect(runCleanupBodySchema.parse({ cloud_id: 'c1' })).toEqual({
      cloud_id: 'c1',
      path: '/',
      imode: CLEANUP_IMODE_DEFAULT,
      large_threshold: LARGE_FILE_THRESHOLD_DEFAULT,
    });
    expect(CLEANUP_IMODE_DEFAULT).toBe(7);
    for (const imode of [0, 8, 1.5])
      expect(runCleanupBodySchema.safeParse({ cloud_id: 'c', imode }).success).toBe(false);
    expect(runCleanupBodySchema.safeParse({ cloud_id: 'c', path: 'a/b' }).success).toBe(false);
    expect(runCleanupBodySchema.safeParse({ cloud_id: 'c', path: '/a/../b' }).success).toBe(false);
    expect(runCleanupBodySchema.safeParse({ cloud_id: 'c', other: 1 }).success).toBe(false);
  });

  it('pages results 20 at a time, largest first, in every category, coercing query strings', () => {
    expect(cleanupListQuerySchema.parse({ task_id: 't' })).toEqual({
      task_id: 't',
      page: 1,
      page_size: PAGE_SIZES.cleanup,
      category: 'all',
      sort_by: 'size',
      order: 'desc',
    });
    expect(PAGE_SIZES.cleanup).toBe(20);
    expect(cleanupListQuerySchema.parse({ task_id: 't', page: '2', page_size: '50', order: 'asc' })).toMatchObject({
      page: 2,
      page_size: 50,
      order: 'asc',
    });
    expect(cleanupListQuerySchema.safeParse({ task_id: 't', page_size: '101' }).success).toBe(false);
    expect(cleanupListQuerySchema.safeParse({ task_id: 't', category: 'books' }).success).toBe(false);
    for (const category of ['all', 'video', 'audio', 'document', 'other', 'picture']) {
      expect(cleanupListQuerySchema.safeParse({ task_id: 't', category }).success).toBe(true);
    }
  });

  it('deletes selected ids (at most 500) or all, with the explicit every-copy flag', () => {
    expect(deleteCleanupBodySchema.parse({ task_id: 't' })).toEqual({ task_id: 't', ids: [] });
    expect(
      deleteCleanupBodySchema.parse({ task_id: 't', ids: ['a'], delete_all_copies: true, keep: 'oldest' }),
    ).toEqual({ task_id: 't', ids: ['a'], delete_all_copies: true, keep: 'oldest' });
    expect(deleteCleanupBodySchema.safeParse({ task_id: 't', ids: Array(501).fill('x') }).success).toBe(false);
    expect(deleteCleanupBodySchema.safeParse({ task_id: 't', keep: 'largest' }).success).toBe(false);
    expect(deleteCleanupBodySchema.safeParse({ task_id: 't', sneaky: true }).success).toBe(false);
  });
});
