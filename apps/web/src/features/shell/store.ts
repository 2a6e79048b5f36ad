import { createStore, useStore } from '../../lib/store.ts';

export type SettingsTab =
  | 'general'
  | 'account'
  | 'language'
  | 'notification'
  | 'export'
  | 'defaults'
  | 'operator'
  // Support (issue 39): the user's own messages, and the operator's inbox.
  | 'support'
  | 'inbox';

/** Which shell dialogs are open. Features open them through the functions below. */
export interface ShellState {
  settingsOpen: boolean;
  settingsTab: SettingsTab;
  transmissionOpen: boolean;
  connectOpen: boolean;
  /** The kind the connect dialog should start with, if any. */
  connectKind: string | null;
  guideOpen: boolean;
  supportOpen: boolean;
  aboutOpen: boolean;
  feedbackOpen: boolean;
  /** The desktop client's Upgrade modal (Check for Updates). */
  upgradeOpen: boolean;
}

export const shellStore = createStore<ShellState>({
  settingsOpen: false,
  settingsTab: 'general',
  transmissionOpen: false,
  connectOpen: false,
  connectKind: null,
  guideOpen: false,
  supportOpen: false,
  aboutOpen: false,
  feedbackOpen: false,
  upgradeOpen: false,
});

export function useShell<S>(selector: (s: ShellState) => S): S {
  return useStore(shellStore, selector);
}

export function openSettings(tab: SettingsTab = 'general'): void {
  shellStore.setState({ settingsOpen: true, settingsTab: tab });
}
export function closeSettings(): void {
  shellStore.setState({ settingsOpen: false });
}
export function setSettingsTab(tab: SettingsTab): void {
  shellStore.setState({ settingsTab: tab });
}
/** Opens the Transmission list dialog (the header's task-list button). */
export function openTransmissionList(): void {
  shellStore.setState({ transmissionOpen: true });
}
/** Opens the Connect cloud drive dialog, optionally on one kind. */
export function openConnectCloud(kind: string | null = null): void {
  shellStore.setState({ connectOpen: true, connectKind: kind });
}
export function openUserGuide(): void {
  shellStore.setState({ guideOpen: true });
}
export function openSupport(): void {
  shellStore.setState({ supportOpen: true });
}
export function openAbout(): void {
  shellStore.setState({ aboutOpen: true });
}
export function openFeedback(): void {
  shellStore.setState({ feedbackOpen: true });
}
export function openUpgrade(): void {
  shellStore.setState({ upgradeOpen: true });
}
export function closeShellDialog(
  key: 'transmissionOpen' | 'connectOpen' | 'guideOpen' | 'supportOpen' | 'aboutOpen' | 'feedbackOpen' | 'upgradeOpen',
): void {
  shellStore.setState({ [key]: false } as Partial<ShellState>);
}
