import {
  CLEANUP_IMODE,
  CleanupStatus,
  MB,
  GB,
  type CleanupCategory,
  type CleanupKind,
  type CleanupStage,
  type CleanupTask,
  type DuplicateGroupItem,
} from '@skyferry/contract';

/** The scan modes in the order the screens show them, with their imode bit. */
export const MODES: ReadonlyArray<{ kind: CleanupKind; bit: number }> = [
  { kind: 'duplicate_files', bit: CLEANUP_IMODE.duplicates },
  { kind: 'large_files', bit: CLEANUP_IMODE.largeFiles },
  { kind: 'empty_folders', bit: CLEANUP_IMODE.emptyFolders },
];

/** The modes an imode bit set includes. */
export function modesOf(imode: number): CleanupKind[] {
  return MODES.filter((m) => (imode & m.bit) !== 0).map((m) => m.kind);
}

/** The imode bit set of chosen modes. */
export function imodeOf(kinds: readonly CleanupKind[]): number {
  return MODES.filter((m) => kinds.includes(m.kind)).reduce((n, m) => n | m.bit, 0);
}

/** Result category tabs, in the spec's order (section 2: All, Videos, Audios, Documents, Others and pictures). */
export const CATEGORY_TABS: readonly CleanupCategory[] = ['all', 'video', 'audio', 'document', 'other', 'picture'];

/** Large-file thresholds offered (100 MB is the default). */
export const THRESHOLDS: readonly number[] = [10 * MB, 50 * MB, 100 * MB, 500 * MB, GB];

/** How many results of a kind a finished scan found. */
export function countOf(task: CleanupTask, kind: CleanupKind): number {
  if (kind === 'duplicate_files') return task.duplicate.group_count;
  if (kind === 'large_files') return task.large.count;
  return task.empty.count;
}

/** The screen's stage for a task status (spec section 4: scanning, results, deleting, done). */
export function stageFor(status: number | null, current: CleanupStage): CleanupStage {
  if (status === CleanupStatus.starting || status === CleanupStatus.scanning) return 'scanning';
  if (status === CleanupStatus.completed) return current === 'deleting' || current === 'done' ? current : 'results';
  return 'idle';
}

/**
 * The smart filter: in each duplicate group, every copy but the newest (or the oldest) by
 * modification time. Copies with the same time keep the first by path.
 */
export function smartSelect(groups: readonly DuplicateGroupItem[], keep: 'newest' | 'oldest'): string[] {
  const out: string[] = [];
  for (const g of groups) {
    if (g.files.length < 2) continue;
    let kept = g.files[0];
    for (const f of g.files) {
      const a = f.modified ?? 0;
      const b = kept?.modified ?? 0;
      if (keep === 'newest' ? a > b : a < b) kept = f;
    }
    for (const f of g.files) if (f.id !== kept?.id) out.push(f.id);
  }
  return out;
}

/** Groups whose every copy is selected (deleting them removes the file altogether). */
export function wholeGroups(
  groups: readonly DuplicateGroupItem[],
  selected: ReadonlySet<string>,
): DuplicateGroupItem[] {
  return groups.filter((g) => g.files.length > 0 && g.files.every((f) => selected.has(f.id)));
}

/** Bytes a selection holds (each id once). */
export function selectedBytes(
  items: ReadonlyArray<{ id: string; size: number }>,
  selected: ReadonlySet<string>,
): number {
  let n = 0;
  for (const i of items) if (selected.has(i.id)) n += i.size;
  return n;
}
