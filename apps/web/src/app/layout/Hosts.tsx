import { Notifications } from '@mantine/notifications';
import '@mantine/notifications/styles.layer.css';
import { INTERVALS } from '@skyferry/contract';
import { useEffect } from 'react';
import { AuthHost } from '../../features/auth/AuthHost.tsx';
import { AppFrames } from '../../features/ecology/AppFrames.tsx';
import { TipOverlay } from '../../features/guide/TipOverlay.tsx';
import { useExportDialog } from '../../features/export/store.ts';
import { MessageHost } from '../../features/messages/MessageHost.tsx';
import { useSession } from '../../features/session/store.ts';
import { ShellDialogs } from '../../features/shell/ShellDialogs.tsx';
import { useShell } from '../../features/shell/store.ts';
import { DesktopTaskReporter } from '../../features/tasks/desktop-reporter.ts';
import { lazyDialog, preloadLazyDialogs } from '../lazy-dialog.tsx';

const LazySettingsDialog = lazyDialog<{ opened: boolean }>(() =>
  import('../../features/settings/SettingsPanel.tsx').then((m) => m.SettingsDialog),
);

const LazyExportDialog = lazyDialog<{ opened: boolean }>(() =>
  import('../../features/export/ExportDialog.tsx').then((m) => m.ExportDialog),
);

/** The Export to dialog (features/export), fetched the first time an export asks for it. */
function ExportDialogHost() {
  const opened = useExportDialog((s) => s.request !== null);
  return <LazyExportDialog opened={opened} />;
}

const DIALOG_PRELOAD_DELAY_MS = 2000;

/** The Settings dialog, fetched the first time it opens. */
function SettingsDialog() {
  const opened = useShell((s) => s.settingsOpen);
  return <LazySettingsDialog opened={opened} />;
}

/**
 * What any screen can open: toasts, messages, sign-in, settings, the shell's dialogs, tips. All of
 * them follow stores, so the layout mounts them just after the first paint (a chunk of their own)
 * and nothing asked for before is lost.
 */
export default function Hosts() {
  // The dialogs' chunks, a while after start-up when the browser is idle (the screen has had its
  // turn), so that they open at once.
  const started = useSession((s) => s.started);
  useEffect(() => {
    if (!started || typeof requestIdleCallback !== 'function') return;
    let idle: number | undefined;
    const timer = setTimeout(() => {
      idle = requestIdleCallback(preloadLazyDialogs, { timeout: 5000 });
    }, DIALOG_PRELOAD_DELAY_MS);
    return () => {
      clearTimeout(timer);
      if (idle !== undefined) cancelIdleCallback(idle);
    };
  }, [started]);
  return (
    <>
      <Notifications autoClose={INTERVALS.toast} />
      <AuthHost />
      <SettingsDialog />
      <ExportDialogHost />
      <ShellDialogs />
      <MessageHost />
      <TipOverlay />
      <DesktopTaskReporter />
      <AppFrames />
    </>
  );
}
