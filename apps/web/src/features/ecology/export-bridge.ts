import type { AppExportFileInfo } from '@skyferry/contract';
import { createStore } from '../../lib/store.ts';
import type { AppTab } from './tabs.ts';

/**
 * The export an app asked for (file/export): stored here for the Export to dialog, which opens
 * when `pending` is set (spec section 7: "file/export stores the file info and opens export").
 */
export interface PendingExport {
  info: AppExportFileInfo;
  appName: string;
  at: number;
}

export const appExportStore = createStore<{ pending: PendingExport | null }>({ pending: null });

export function requestAppExport(info: AppExportFileInfo, tab: Pick<AppTab, 'app'>): void {
  appExportStore.setState({ pending: { info, appName: tab.app.name, at: Date.now() } });
}

export function clearAppExport(): void {
  appExportStore.setState({ pending: null });
}
