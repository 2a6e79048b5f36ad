import { CLOUD_KIND_INFO, CLOUD_KINDS, type CloudKind } from '@skyferry/contract';
import { i18n } from '../../i18n/index.ts';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';
import type { Cloud } from '../session/types.ts';

export function isCloudKind(name: string): name is CloudKind {
  return (CLOUD_KINDS as readonly string[]).includes(name);
}

/**
 * The display name of a cloud kind in the interface language ("Google Drive", "Dossier local");
 * an unknown kind shows `fallback` (the server's name for it) or its identifier.
 */
export function kindName(name: string, fallback?: string): string {
  if (!isCloudKind(name)) return fallback || name;
  return i18n.t(`common:kind.${name}`, { defaultValue: CLOUD_KIND_INFO[name].displayName });
}

/** Kinds that can be connected first, the unavailable ones after them, each group in its own order. */
export function availableFirst<T extends { available: boolean }>(kinds: readonly T[]): T[] {
  return [...kinds.filter((k) => k.available), ...kinds.filter((k) => !k.available)];
}

export function isPhotosCloud(cloud: Pick<Cloud, 'cloud_name'> & Partial<Pick<Cloud, 'photos'>>): boolean {
  return cloud.photos ?? (isCloudKind(cloud.cloud_name) && CLOUD_KIND_INFO[cloud.cloud_name].photos);
}

export function isSharedCloud(cloud: Pick<Cloud, 'cloud_name'> & Partial<Pick<Cloud, 'shared'>>): boolean {
  return cloud.shared ?? (isCloudKind(cloud.cloud_name) && CLOUD_KIND_INFO[cloud.cloud_name].shared);
}

/** What a cloud is called in lists: its alias, else its account. */
export function cloudLabel(cloud: Pick<Cloud, 'cloud_alias_name' | 'cloud_account' | 'cloud_name'>): string {
  return cloud.cloud_alias_name || cloud.cloud_account || kindName(cloud.cloud_name);
}

/**
 * Where a click on a cloud goes: the explorer, or the photos view for a photos cloud, with the
 * query cloud_index, is_open and a timestamp `_` (spec section 2).
 */
export function cloudHref(
  cloud: Pick<Cloud, 'cloud_name'> & Partial<Pick<Cloud, 'photos'>>,
  index: number,
  now = Date.now(),
): string {
  const base = isPhotosCloud(cloud) ? '/manage/photos' : '/manage/explorer';
  return `${base}?cloud_index=${index}&is_open=1&_=${now}`;
}

/** Clouds opened most recently, newest first (ids with the time they were opened). */
export interface RecentCloud {
  id: string;
  at: number;
}

export function recentClouds(): RecentCloud[] {
  const list = readJson<RecentCloud[]>(STORAGE_KEYS.recentClouds, []);
  return Array.isArray(list) ? list : [];
}

export function markCloudUsed(id: string, now = Date.now()): void {
  const list = recentClouds().filter((r) => r.id !== id);
  list.unshift({ id, at: now });
  writeJson(STORAGE_KEYS.recentClouds, list.slice(0, 20));
}

/** Moves one item of a list from one index to another (used by drag and keyboard reordering). */
export function moveItem<T>(list: readonly T[], from: number, to: number): T[] {
  const next = [...list];
  if (from < 0 || from >= next.length || to < 0 || to >= next.length || from === to) return next;
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item as T);
  return next;
}
