import { createStore, useStore } from '../../lib/store.ts';
import type { ExportFile, ExportTarget } from './model.ts';
import type { ExportFileResult } from './perform.ts';

/** What openExportDialog answers: cancelled, or where the files went and how each export ended. */
export type ExportResult =
  { outcome: 'cancelled' } | { outcome: 'exported'; target: ExportTarget; results: ExportFileResult[] };

export interface ExportRequest {
  files: ExportFile[];
  resolve: (result: ExportResult) => void;
}

export interface ExportDialogState {
  /** The request the dialog shows; null when it is closed. */
  request: ExportRequest | null;
  /** Each file's progress once Export was pressed; null while choosing. */
  results: ExportFileResult[] | null;
}

export const exportStore = createStore<ExportDialogState>({ request: null, results: null });

export function useExportDialog<S>(selector: (s: ExportDialogState) => S): S {
  return useStore(exportStore, selector);
}
