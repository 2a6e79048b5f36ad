import { createStore, useStore } from '../../lib/store.ts';
import { onSessionEvent } from '../session/events.ts';
import { getTransferDefaults } from '../settings/preferences.ts';
import type { TransferForm, TransferKind } from './model.ts';

/** A fresh form, starting from the user's defaults (same-name handling and file filter). */
export function initialForm(): TransferForm {
  const defaults = getTransferDefaults();
  return {
    sourceCloudId: null,
    source: [],
    targetCloudId: null,
    targetPath: '/',
    syncMode: 'one_way',
    sameNamePolicy: defaults.sameNamePolicy,
    filterMode: defaults.fileFilter?.mode ?? 'none',
    filterCategories: defaults.fileFilter ? [...defaults.fileFilter.categories] : [],
    filterRules: '',
    minSize: '',
    maxSize: '',
    minAge: '',
    maxAge: '',
    schedule: null,
    googleDocs: 'export',
  };
}

export type TransferState = Record<TransferKind, TransferForm>;

/** The migrate and sync selections, kept while moving between screens; logout clears them. */
export const transferStore = createStore<TransferState>({ migrate: initialForm(), sync: initialForm() });

export function useTransferForm(kind: TransferKind): TransferForm {
  return useStore(transferStore, (s) => s[kind]);
}

export function patchForm(kind: TransferKind, patch: Partial<TransferForm>): void {
  transferStore.setState((s) => ({ [kind]: { ...s[kind], ...patch } }));
}

export function resetForms(): void {
  transferStore.setState({ migrate: initialForm(), sync: initialForm() });
}

onSessionEvent('logout', resetForms);
