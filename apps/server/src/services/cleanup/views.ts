import type {
  CleanupItem,
  CleanupPhaseName,
  CleanupTask,
  DuplicateGroupItem,
  EmptyFolderItem,
  LargeSummary,
} from '@skyferry/contract';
import type { CategoryCounts, CleanupItemRow, CleanupTaskRow, GroupRow } from '../../repositories/cleanup.ts';

/** Result counts of a finished scan (zeros while it runs). */
export interface Summaries {
  duplicate: CategoryCounts & { groups: number };
  large: CategoryCounts;
  empty: number;
}

export const NO_SUMMARIES: Summaries = {
  duplicate: { count: 0, size: 0, groups: 0, byCategory: {} },
  large: { count: 0, size: 0, byCategory: {} },
  empty: 0,
};

function byType(c: CategoryCounts): Omit<LargeSummary, 'count' | 'size'> {
  return {
    image: c.byCategory.picture ?? 0,
    video: c.byCategory.video ?? 0,
    audio: c.byCategory.audio ?? 0,
    document: c.byCategory.document ?? 0,
    other: c.byCategory.other ?? 0,
  };
}

function parseError(text: string | null): { code: string; message: string } | null {
  if (!text) return null;
  try {
    const e = JSON.parse(text) as { code?: unknown; message?: unknown };
    return { code: String(e.code ?? 'internal'), message: String(e.message ?? '') };
  } catch {
    return { code: 'internal', message: text };
  }
}

/** The spec's clean-up task as the API shows it. */
export function toCleanupTask(
  row: CleanupTaskRow,
  summaries: Summaries,
  access: { limited: boolean; freeDeletable: number },
  now: number,
): CleanupTask {
  const scanning = row.status === 1;
  const start = row.started_at ?? row.created_at;
  const runtime = row.finished_at !== null ? row.finished_at - start : scanning && row.started_at ? now - start : 0;
  const phase = scanning ? ((row.phase ?? 'waiting') as CleanupPhaseName) : null;
  const percentage =
    phase === 'hashing' && row.bytes_planned > 0
      ? Math.min(100, Math.round((row.bytes_read / row.bytes_planned) * 1000) / 10)
      : phase === 'finishing'
        ? 100
        : null;
  return {
    task_id: row.id,
    cloud_id: row.cloud_id,
    path: row.path,
    total_count: row.total_count,
    runtime: Math.max(0, runtime),
    imode: row.imode,
    large_threshold: row.large_threshold,
    free_del_num: access.limited ? access.freeDeletable : -1,
    status: row.status,
    filename: row.filename,
    phase,
    percentage,
    folder_count: row.folder_count,
    total_size: row.total_size,
    bytes_read: row.bytes_read,
    duplicate: {
      count: summaries.duplicate.count,
      group_count: summaries.duplicate.groups,
      size: summaries.duplicate.size,
      ...byType(summaries.duplicate),
    },
    large: { count: summaries.large.count, size: summaries.large.size, ...byType(summaries.large) },
    empty: { count: summaries.empty },
    has_trash: row.has_trash === 1,
    limited: access.limited,
    error_count: row.error_count,
    error: parseError(row.error),
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

type Category = CleanupItem['category'];

export function toItem(r: CleanupItemRow): CleanupItem {
  return {
    id: r.id,
    path: r.path,
    name: r.name,
    size: r.size,
    modified: r.modified,
    category: r.category as Category,
  };
}

export function toEmptyFolder(r: CleanupItemRow): EmptyFolderItem {
  return { ...toItem(r), nested_count: r.nested_count };
}

export function toGroup(g: GroupRow): DuplicateGroupItem {
  return {
    group_id: g.group_id,
    hash: g.group_hash,
    size: g.size,
    category: (g.members[0]?.category ?? 'other') as Category,
    files: g.members.map(toItem),
  };
}
