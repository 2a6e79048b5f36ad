/**
 * Export to (spec sections 2, 4 and 7): the one entry point other features use.
 *
 * `openExportDialog(files)` exports one or more files to this computer and/or one of the user's
 * clouds. Each file is `{ filename, size | filesize, download_url | base64_data }` (the spec's
 * "export file info from an app"; a data-URL prefix on base64_data is fine) or, for a file already
 * in one of the user's clouds, `{ filename, size, source: { cloud_id, path } }`.
 *
 * - With "Save this setting and don't remind again" saved (Settings > Export Setting, or ticked in
 *   the dialog) and a saved target still available, it exports there without asking; a saved
 *   default cloud that is gone is cleared and the dialog opens.
 * - Otherwise the Export to dialog opens: local (with the download path in the desktop client),
 *   the clouds by account, Export greyed until a target is chosen.
 * - A cloud export goes to the product's folder (EXPORT_FOLDER_NAME, made or reused) through
 *   start-upload, polled every second; failures are status -2 in the result, with no message.
 *
 * It resolves `{ outcome: 'cancelled' }` when the dialog is closed without exporting, else
 * `{ outcome: 'exported', target, results }` once every file's export has ended (results[i].local
 * and .cloud are 1 for success, -2 for failure). Only one dialog is open at a time: a second
 * request while one is open resolves 'cancelled' at once.
 *
 * An embedded app's `file/export` request calls it with the app's file info.
 */
import { ExportStatus } from '@skyferry/contract';
import { i18n } from '../../i18n/index.ts';
import { toast } from '../messages/toast.ts';
import { saveExportSettings, getExportSettings } from '../settings/preferences.ts';
import { selectVisibleClouds, sessionStore } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { exportDecision, exportTargets, type ExportFile } from './model.ts';
import { performExport } from './perform.ts';
import { exportStore, type ExportResult } from './store.ts';

export type { ExportFile, ExportTarget } from './model.ts';
export type { ExportFileResult } from './perform.ts';
export type { ExportResult } from './store.ts';

export function openExportDialog(files: ExportFile | readonly ExportFile[]): Promise<ExportResult> {
  const list = Array.isArray(files) ? [...(files as readonly ExportFile[])] : [files as ExportFile];
  if (list.length === 0 || exportStore.getState().request) return Promise.resolve({ outcome: 'cancelled' });
  const clouds = selectVisibleClouds(sessionStore.getState());
  const targets = exportTargets(clouds, list);
  const settings = getExportSettings();
  // "Still connected" is judged on every writable cloud: a photos cloud is no target for a PDF, yet stays the default.
  const decision = exportDecision(settings, exportTargets(clouds));
  const fits =
    decision.kind === 'silent' && (!decision.target.cloudId || targets.some((c) => c.id === decision.target.cloudId));
  if (decision.kind === 'silent' && fits) {
    const cloud = targets.find((c) => c.id === decision.target.cloudId);
    return performExport(list, decision.target, cloud).then((results) => {
      const ok = results.every((r) => r.local !== ExportStatus.failed && r.cloud !== ExportStatus.failed);
      // Failures are not shown (spec section 8); a success says where the files went.
      if (ok && cloud) toast.success(i18n.t('export:exported', { target: cloudLabel(cloud) }));
      return { outcome: 'exported', target: decision.target, results };
    });
  }
  if (decision.kind === 'dialog' && decision.clearDefault) saveExportSettings({ ...settings, defaultCloudId: '' });
  return new Promise<ExportResult>((resolve) => {
    exportStore.setState({ request: { files: list, resolve }, results: null });
  });
}
