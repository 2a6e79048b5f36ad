import {
  CLOUD_KIND_INFO,
  ExportStatus,
  INTERVALS,
  canWrite,
  isPhotoOrVideo,
  stripDataUrlPrefix,
  type ExportProgress,
  type ExportStatusValue,
  type StartUploadBody,
  type StartUploadData,
} from '@skyferry/contract';
import type { ExportSettings } from '../settings/preferences.ts';
import type { Cloud } from '../session/types.ts';
import { isCloudKind, isPhotosCloud } from '../shell/clouds.ts';

/**
 * A file to export (spec section 3, "Export file info from an app"): its name, its size (`size` or
 * `filesize`), and its bytes as `download_url` or `base64_data` (a data-URL prefix is stripped
 * before it is sent). `source` names a file of one of the user's clouds instead (the explorer's
 * "Export to"): a download link is made for it when the export starts.
 */
export interface ExportFile {
  filename: string;
  size?: number;
  filesize?: number;
  download_url?: string;
  base64_data?: string;
  source?: { cloud_id: string; path: string };
  /** The page or app the file comes from. */
  referer?: string;
}

/** Where an export goes: this computer, a cloud, or both. */
export interface ExportTarget {
  local: boolean;
  cloudId: string | null;
}

/** Clouds an export can go to: writable, not expired, and a photos cloud only when every file is a picture or video. */
export function exportTargets(clouds: readonly Cloud[], files: readonly Pick<ExportFile, 'filename'>[] = []): Cloud[] {
  const media = files.every((f) => isPhotoOrVideo(f.filename));
  return clouds.filter(
    (c) =>
      c.status !== 'expired' &&
      canWrite(c.flags ?? (isCloudKind(c.cloud_name) ? CLOUD_KIND_INFO[c.cloud_name].flags : 0)) &&
      (media || !isPhotosCloud(c)),
  );
}

/** The clouds grouped by the account they belong to (the kind's name, then each connected account). */
export function groupByAccount(clouds: readonly Cloud[]): Array<{ kind: string; clouds: Cloud[] }> {
  const groups = new Map<string, Cloud[]>();
  for (const c of clouds) groups.set(c.cloud_name, [...(groups.get(c.cloud_name) ?? []), c]);
  return [...groups].map(([kind, list]) => ({ kind, clouds: list }));
}

/**
 * What an export request does (spec section 6, Export): with "don't remind again" saved, a saved
 * default cloud still connected is exported to silently (and local too when saved); a saved
 * default that is gone is cleared and the dialog opens; save-to-local alone exports locally; with
 * neither, or without "don't remind again", the dialog opens.
 */
export function exportDecision(
  settings: ExportSettings,
  targets: readonly Cloud[],
): { kind: 'dialog'; clearDefault: boolean } | { kind: 'silent'; target: ExportTarget } {
  const hasDefault = settings.defaultCloudId !== '';
  const defaultOk = hasDefault && targets.some((c) => c.id === settings.defaultCloudId);
  if (hasDefault && !defaultOk) return { kind: 'dialog', clearDefault: true };
  if (!settings.closeExportPanel) return { kind: 'dialog', clearDefault: false };
  if (!defaultOk && !settings.saveToLocal) return { kind: 'dialog', clearDefault: false };
  return {
    kind: 'silent',
    target: { local: settings.saveToLocal, cloudId: defaultOk ? settings.defaultCloudId : null },
  };
}

/** The body of start-upload for a file: download_url or base64_data (its data-URL prefix stripped). */
export function startUploadBody(
  file: ExportFile,
  cloud: Pick<Cloud, 'id' | 'cloud_name'>,
  parent: string,
  downloadUrl?: string,
): StartUploadBody | null {
  const url = downloadUrl ?? file.download_url;
  const size = file.size ?? file.filesize;
  const base = {
    cloud_type: cloud.cloud_name,
    token_id: cloud.id,
    file_name: file.filename,
    ...(size !== undefined && Number.isSafeInteger(size) && size >= 0 ? { file_size: size } : {}),
    referer: file.referer ?? (typeof window === 'undefined' ? '' : window.location.href),
    parent,
  };
  if (url) return { ...base, download_url: url };
  if (file.base64_data) return { ...base, base64_data: stripDataUrlPrefix(file.base64_data) };
  return null;
}

export interface ExportCalls {
  startUpload(body: StartUploadBody): Promise<StartUploadData>;
  pollProgress(taskId: string): Promise<ExportProgress>;
}

/**
 * Runs one export to a cloud (spec section 4, export upload task status): starts it, then polls its
 * progress every second (INTERVALS.exportPoll) until the percent reaches 100 or it ends. Answers 1
 * on success and -2 on failure: no data to send, a failed start, a failed poll or a thrown error
 * are all -2 (and shown to nobody: spec section 8).
 */
export async function runExport(
  body: StartUploadBody | null,
  calls: ExportCalls,
  onProgress: (percent: number) => void = () => undefined,
  wait: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<ExportStatusValue> {
  if (!body) return ExportStatus.failed;
  try {
    const started = await calls.startUpload(body);
    if (!started?.task_id) return ExportStatus.failed;
    for (;;) {
      await wait(INTERVALS.exportPoll);
      const p = await calls.pollProgress(started.task_id);
      if (!p) return ExportStatus.failed;
      onProgress(p.percent);
      if (p.status === ExportStatus.failed) return ExportStatus.failed;
      if (p.status === ExportStatus.success || p.percent >= 100) return ExportStatus.success;
    }
  } catch {
    return ExportStatus.failed;
  }
}
