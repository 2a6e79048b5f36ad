/**
 * Plug-in points of the shell. A later feature replaces a placeholder by changing one line here
 * (import its own component instead). Each keeps the props shown.
 */
import type { ComponentType } from 'react';
import type { DialogSlotProps } from './slot-types.ts';

export type { DialogSlotProps };
import { AppTabs as OpenAppTabs } from '../features/ecology/AppTabs.tsx';
import { lazyDialog } from './lazy-dialog.tsx';

// The larger dialogs are fetched when first opened (lazyDialog), not with the first page.
const TransmissionList = lazyDialog(() =>
  import('../features/tasks/TransmissionListDialog.tsx').then((m) => m.TransmissionListDialog),
);
const ConnectCloud = lazyDialog(() =>
  import('../features/connect/ConnectCloudDialog.tsx').then((m) => m.ConnectCloudDialog),
);
const Feedback = lazyDialog(() => import('../features/support/FeedbackDialog.tsx').then((m) => m.FeedbackDialog));

/** Tabs of open third-party apps in the header (the apps issue). */
export const AppTabs: ComponentType = OpenAppTabs;

/** The Transmission list dialog the header's task-list button opens (the transfer issue). */
export const TransmissionListDialog: ComponentType<DialogSlotProps> = TransmissionList;

/** The Connect cloud drive dialog (the cloud management issue); `kind` preselects a cloud kind. */
export const ConnectCloudDialog: ComponentType<DialogSlotProps & { kind: string | null }> = ConnectCloud;

/** The feedback dialog: the desktop client's Feedback entry, and the banner's contact link everywhere. */
export const FeedbackDialog: ComponentType<DialogSlotProps> = Feedback;
