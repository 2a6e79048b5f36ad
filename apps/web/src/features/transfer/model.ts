import {
  Code,
  FILTER_CATEGORIES,
  TaskType,
  canRead,
  canWrite,
  hasGoogleDocs,
  isPhotoOrVideo,
  filterHasCriteria,
  isWithin,
  normalizePath,
  rulesFileLines,
  scheduleFromDialog,
  type CreateTaskBody,
  type CreateTaskData,
  type FileFilter,
  type FilterCategory,
  type GoogleDocsMode,
  type InsufficientSpaceData,
  type SameNamePolicy,
  type ScheduleDialogValue,
  type SyncMode,
} from '@skyferry/contract';
import { ApiRequestError } from '../../api/client.ts';
import type { Cloud } from '../session/types.ts';
import { isPhotosCloud } from '../shell/clouds.ts';

export type TransferKind = 'migrate' | 'sync';
export type FilterChoice = 'none' | 'include' | 'exclude';

/** A picked source entry: its path and whether it is a folder (0) or a file (1). */
export interface PickedEntry {
  path: string;
  type: 0 | 1;
}

/** What the Transfer or Sync screen holds (kept per screen until logout). */
export interface TransferForm {
  sourceCloudId: string | null;
  /** Migrate: any files and folders; sync: one folder. */
  source: PickedEntry[];
  targetCloudId: string | null;
  targetPath: string;
  syncMode: SyncMode;
  sameNamePolicy: SameNamePolicy;
  filterMode: FilterChoice;
  filterCategories: FilterCategory[];
  /** rclone filter rules, one a line ("+ pattern", "- pattern"; # starts a remark). */
  filterRules: string;
  /** rclone sizes ("10M") and ages ("7d"); '' when not set. */
  minSize: string;
  maxSize: string;
  minAge: string;
  maxAge: string;
  /** null: start now. */
  schedule: ScheduleDialogValue | null;
  /** Google Docs from a Google Drive source: exported to Office files, or skipped. */
  googleDocs: GoogleDocsMode;
}

/** The Google Docs choice applies (and shows) only when the source is a Google Drive kind. */
export function offersGoogleDocs(source: Pick<Cloud, 'cloud_name'> | null | undefined): boolean {
  return source !== null && source !== undefined && hasGoogleDocs(source.cloud_name);
}

export const MEDIA_CATEGORIES: readonly FilterCategory[] = ['picture', 'video'];

/** Same-name policies apply to migrate, one-way and incremental sync; mirror and two-way ignore them. */
export function usesSameNamePolicy(kind: TransferKind, mode: SyncMode): boolean {
  return kind === 'migrate' || mode === 'one_way' || mode === 'incremental';
}

/** Mirror and two-way syncs may delete; their deletions are confirmed with the list of what goes. */
export function mayDelete(kind: TransferKind, mode: SyncMode): boolean {
  return kind === 'sync' && (mode === 'mirror' || mode === 'two_way');
}

export type FilterFields = Pick<
  TransferForm,
  'filterMode' | 'filterCategories' | 'filterRules' | 'minSize' | 'maxSize' | 'minAge' | 'maxAge'
>;

/** The filter the user chose (categories, rules, sizes and ages), or null. */
export function chosenFilter(form: FilterFields): FileFilter | null {
  const categories =
    form.filterMode === 'none' ? [] : FILTER_CATEGORIES.filter((c) => form.filterCategories.includes(c));
  const filter: FileFilter = {
    mode: form.filterMode === 'exclude' && categories.length > 0 ? 'exclude' : 'include',
    categories,
  };
  const rules = rulesFileLines(form.filterRules);
  if (rules.length > 0) filter.rules = rules;
  if (form.minSize.trim()) filter.min_size = form.minSize.trim();
  if (form.maxSize.trim()) filter.max_size = form.maxSize.trim();
  if (form.minAge.trim()) filter.min_age = form.minAge.trim();
  if (form.maxAge.trim()) filter.max_age = form.maxAge.trim();
  return filterHasCriteria(filter) ? filter : null;
}

/**
 * The filter a photos target gets: only pictures and videos, narrowed by the user's own choice;
 * null when nothing would be left.
 */
export function photosFilter(filter: FileFilter | null): FileFilter | null {
  let categories: FilterCategory[];
  if (!filter || filter.categories.length === 0) categories = [...MEDIA_CATEGORIES];
  else if (filter.mode === 'include') categories = filter.categories.filter((c) => MEDIA_CATEGORIES.includes(c));
  else categories = MEDIA_CATEGORIES.filter((c) => !filter.categories.includes(c));
  return categories.length > 0 ? { ...filter, mode: 'include', categories } : null;
}

export type FormProblem =
  | 'select_files'
  | 'select_source_cloud'
  | 'select_target'
  | 'target_read_only'
  | 'source_unreadable'
  | 'source_read_only'
  | 'same_path'
  | 'photos_only';

/** The first reason the form cannot go on, in the order the user meets them, or null. */
export function formProblem(form: TransferForm, kind: TransferKind, clouds: readonly Cloud[]): FormProblem | null {
  const source = clouds.find((c) => c.id === form.sourceCloudId);
  if (!source) return 'select_source_cloud';
  if (!canRead(source.flags)) return 'source_unreadable';
  if (form.source.length === 0) return 'select_files';
  const target = clouds.find((c) => c.id === form.targetCloudId);
  if (!target) return 'select_target';
  if (!canWrite(target.flags)) return 'target_read_only';
  if (kind === 'sync' && form.syncMode === 'two_way' && !canWrite(source.flags)) return 'source_read_only';
  if (source.id === target.id) {
    const to = normalizePath(form.targetPath || '/');
    for (const entry of form.source) {
      const from = normalizePath(entry.path);
      if (isWithin(to, from) || (kind === 'sync' && isWithin(from, to))) return 'same_path';
    }
  }
  if (isPhotosCloud(target)) {
    if (form.source.some((e) => e.type === 1 && !isPhotoOrVideo(e.path))) return 'photos_only';
    if (!photosFilter(chosenFilter(form))) return 'photos_only';
  }
  return null;
}

/** Same cloud drive on both sides: confirmed before anything is planned (spec section 5). */
export function isSameCloud(form: Pick<TransferForm, 'sourceCloudId' | 'targetCloudId'>): boolean {
  return form.sourceCloudId !== null && form.sourceCloudId === form.targetCloudId;
}

function timeZone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/** The POST /api/tasks body of the form. */
export function taskBody(form: TransferForm, kind: TransferKind, clouds: readonly Cloud[]): CreateTaskBody {
  const source = clouds.find((c) => c.id === form.sourceCloudId);
  const target = clouds.find((c) => c.id === form.targetCloudId);
  const filter = target && isPhotosCloud(target) ? photosFilter(chosenFilter(form)) : chosenFilter(form);
  const body: CreateTaskBody = {
    task_type: kind === 'migrate' ? TaskType.migrate : TaskType.sync,
    from_cloud: { cloud_id: form.sourceCloudId ?? '', paths: form.source.map((e) => e.path) },
    to_cloud: { cloud_id: form.targetCloudId ?? '', path: normalizePath(form.targetPath || '/') },
    filter,
    schedule: form.schedule ? scheduleFromDialog(form.schedule) : null,
  };
  const zone = timeZone();
  if (zone) body.time_zone = zone;
  if (kind === 'sync') body.sync_mode = form.syncMode;
  if (usesSameNamePolicy(kind, form.syncMode)) body.same_name_policy = form.sameNamePolicy;
  if (isSameCloud(form)) body.confirm_same_cloud = true;
  if (offersGoogleDocs(source)) body.google_docs = form.googleDocs;
  return body;
}

/** The questions creating a task may raise, each answered true to go on. */
export interface CreatePrompts {
  sameCloud(): Promise<boolean>;
  insufficientSpace(data: InsufficientSpaceData | null): Promise<boolean>;
  deletions(data: { count: number; total: number } | null): Promise<boolean>;
}

/**
 * Creates the task, answering the server's prompts (409003 same cloud, 409004 not enough space,
 * 409005 many deletions) by asking and sending again with the flag. null when the user declined.
 */
export async function createWithPrompts(
  body: CreateTaskBody,
  prompts: CreatePrompts,
  create: (body: CreateTaskBody) => Promise<CreateTaskData>,
): Promise<CreateTaskData | null> {
  let current = { ...body };
  for (let round = 0; round < 4; round++) {
    try {
      return await create(current);
    } catch (err) {
      if (!(err instanceof ApiRequestError)) throw err;
      if (err.code === Code.CONFIRM_SAME_CLOUD && !current.confirm_same_cloud) {
        if (!(await prompts.sameCloud())) return null;
        current = { ...current, confirm_same_cloud: true };
      } else if (err.code === Code.CONFIRM_INSUFFICIENT_SPACE && !current.confirm_insufficient_space) {
        if (!(await prompts.insufficientSpace((err.data as InsufficientSpaceData | null) ?? null))) return null;
        current = { ...current, confirm_insufficient_space: true };
      } else if (err.code === Code.CONFIRM_DELETIONS && !current.confirm_deletions) {
        if (!(await prompts.deletions((err.data as { count: number; total: number } | null) ?? null))) return null;
        current = { ...current, confirm_deletions: true };
      } else {
        throw err;
      }
    }
  }
  throw new Error('too many prompts');
}
