import {
  DEFAULT_SAME_NAME_POLICY,
  FILTER_CATEGORIES,
  SAME_NAME_POLICIES,
  type FilterCategory,
  type FileFilter,
  type SameNamePolicy,
} from '@skyferry/contract';
import { createStore, useStore } from '../../lib/store.ts';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';
import { patchSettings } from '../session/store.ts';

/** Export settings of spec section 3: closeExportPanel, saveToLocal, defaultCloudId (plus the local folder). */
export interface ExportSettings {
  /** "Save this setting and don't remind again": export without asking. */
  closeExportPanel: boolean;
  saveToLocal: boolean;
  /** The default cloud to export to, '' for none. */
  defaultCloudId: string;
  /** The desktop client's local export folder, '' for the default downloads folder. */
  localPath: string;
}

/** Defaults a new transfer starts with, and where downloads go. */
export interface TransferDefaults {
  /** The desktop client's download folder, '' for the system default. Web downloads use the browser's. */
  downloadPath: string;
  sameNamePolicy: SameNamePolicy;
  /** null: no filter. */
  fileFilter: FileFilter | null;
}

export const DEFAULT_EXPORT_SETTINGS: ExportSettings = {
  closeExportPanel: false,
  saveToLocal: false,
  defaultCloudId: '',
  localPath: '',
};

export const DEFAULT_TRANSFER_DEFAULTS: TransferDefaults = {
  downloadPath: '',
  sameNamePolicy: DEFAULT_SAME_NAME_POLICY,
  fileFilter: null,
};

function sanitizeDefaults(raw: Partial<TransferDefaults>): TransferDefaults {
  const policy = (SAME_NAME_POLICIES as readonly string[]).includes(raw.sameNamePolicy ?? '')
    ? (raw.sameNamePolicy as SameNamePolicy)
    : DEFAULT_TRANSFER_DEFAULTS.sameNamePolicy;
  let fileFilter: FileFilter | null = null;
  if (raw.fileFilter && (raw.fileFilter.mode === 'include' || raw.fileFilter.mode === 'exclude')) {
    const categories = (raw.fileFilter.categories ?? []).filter((c): c is FilterCategory =>
      (FILTER_CATEGORIES as readonly string[]).includes(c),
    );
    if (categories.length > 0) fileFilter = { mode: raw.fileFilter.mode, categories };
  }
  return {
    downloadPath: typeof raw.downloadPath === 'string' ? raw.downloadPath : '',
    sameNamePolicy: policy,
    fileFilter,
  };
}

export interface PreferencesState {
  exportSettings: ExportSettings;
  transferDefaults: TransferDefaults;
}

export const preferencesStore = createStore<PreferencesState>({
  exportSettings: { ...DEFAULT_EXPORT_SETTINGS, ...readJson<Partial<ExportSettings>>(STORAGE_KEYS.exportSettings, {}) },
  transferDefaults: sanitizeDefaults(readJson<Partial<TransferDefaults>>(STORAGE_KEYS.transferDefaults, {})),
});

export function usePreferences<S>(selector: (s: PreferencesState) => S): S {
  return useStore(preferencesStore, selector);
}

export function saveExportSettings(next: ExportSettings): void {
  preferencesStore.setState({ exportSettings: next });
  writeJson(STORAGE_KEYS.exportSettings, next);
}

export function saveTransferDefaults(next: TransferDefaults): void {
  const clean = sanitizeDefaults(next);
  preferencesStore.setState({ transferDefaults: clean });
  writeJson(STORAGE_KEYS.transferDefaults, clean);
  patchSettings({ file_save_path: clean.downloadPath });
}

/** For features: the current export settings and transfer defaults. */
export function getExportSettings(): ExportSettings {
  return preferencesStore.getState().exportSettings;
}
export function getTransferDefaults(): TransferDefaults {
  return preferencesStore.getState().transferDefaults;
}
