import { EXPORT_FOLDER_NAME, ExportStatus, type ExportStatusValue } from '@skyferry/contract';
import { filesApi } from '../explorer/api.ts';
import { getExportSettings } from '../settings/preferences.ts';
import type { Cloud } from '../session/types.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { exportApi } from './api.ts';
import { runExport, startUploadBody, type ExportFile, type ExportTarget } from './model.ts';

/** How one file's export went: to this computer and to the cloud (undefined where it did not go). */
export interface ExportFileResult {
  filename: string;
  local?: ExportStatusValue;
  cloud?: ExportStatusValue;
  /** The cloud export's percent. */
  percent: number;
}

/** A download link of this server for a file of one of the user's clouds. */
async function linkOf(source: NonNullable<ExportFile['source']>): Promise<string> {
  return (await filesApi.downloadLink(source.cloud_id, [source.path])).url;
}

/** The address a local save reads: the file's download_url, its cloud's link, or its bytes as a data URL. */
async function localUrl(file: ExportFile): Promise<string | null> {
  if (file.source) return linkOf(file.source);
  if (file.download_url) return file.download_url;
  if (file.base64_data) {
    const data = file.base64_data;
    return data.startsWith('data:') ? data : `data:application/octet-stream;base64,${data}`;
  }
  return null;
}

/**
 * Saves a file on this computer: the desktop client saves it into the export folder of the Export
 * Setting (its download folder when none is set) without a dialog; a browser downloads it.
 */
async function saveLocal(file: ExportFile): Promise<ExportStatusValue> {
  try {
    const url = await localUrl(file);
    if (!url) return ExportStatus.failed;
    const absolute = new URL(url, window.location.href).toString();
    const bridge = desktopBridge();
    if (bridge?.saveUrl) {
      const dir = getExportSettings().localPath;
      const saved = await bridge.saveUrl({ url: absolute, name: file.filename, ...(dir ? { directory: dir } : {}) });
      return saved.state === 'completed' ? ExportStatus.success : ExportStatus.failed;
    }
    const a = document.createElement('a');
    a.href = absolute;
    a.download = file.filename;
    a.rel = 'noopener';
    document.body.appendChild(a);
    a.click();
    a.remove();
    return ExportStatus.success;
  } catch {
    return ExportStatus.failed;
  }
}

/**
 * Exports `files` to `target`: each saved locally and/or written into the product's folder of the
 * target cloud (made or reused first), each cloud export polled every second. `onUpdate` hears
 * every change; the answer is every file's outcome.
 */
export async function performExport(
  files: readonly ExportFile[],
  target: ExportTarget,
  cloud: Cloud | undefined,
  onUpdate: (results: ExportFileResult[]) => void = () => undefined,
): Promise<ExportFileResult[]> {
  const results: ExportFileResult[] = files.map((f) => ({
    filename: f.filename,
    ...(target.local ? { local: ExportStatus.waiting } : {}),
    ...(target.cloudId ? { cloud: ExportStatus.waiting } : {}),
    percent: 0,
  }));
  const set = (i: number, patch: Partial<ExportFileResult>) => {
    results[i] = { ...(results[i] as ExportFileResult), ...patch };
    onUpdate(results.map((r) => ({ ...r })));
  };
  onUpdate(results.map((r) => ({ ...r })));
  const work: Array<Promise<void>> = [];
  if (target.local) {
    work.push(
      (async () => {
        // One at a time: browsers refuse a burst of downloads started together.
        for (const [i, f] of files.entries()) set(i, { local: await saveLocal(f) });
      })(),
    );
  }
  if (target.cloudId) {
    work.push(
      (async () => {
        const parent = `/${EXPORT_FOLDER_NAME}`;
        let ready = Boolean(cloud);
        if (cloud) {
          try {
            await exportApi.mkdir(cloud.id, cloud.cloud_name, EXPORT_FOLDER_NAME);
          } catch {
            ready = false;
          }
        }
        await Promise.all(
          files.map(async (f, i) => {
            if (!ready || !cloud) return set(i, { cloud: ExportStatus.failed });
            let url: string | undefined;
            try {
              url = f.source ? await linkOf(f.source) : undefined;
            } catch {
              return set(i, { cloud: ExportStatus.failed });
            }
            const status = await runExport(startUploadBody(f, cloud, parent, url), exportApi, (percent) =>
              set(i, { percent }),
            );
            set(i, { cloud: status, percent: status === ExportStatus.success ? 100 : (results[i]?.percent ?? 0) });
          }),
        );
      })(),
    );
  }
  await Promise.all(work);
  return results;
}
