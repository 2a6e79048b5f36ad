import { Notifications } from '@mantine/notifications';
import '@mantine/notifications/styles.layer.css';
import { INTERVALS } from '@skyferry/contract';
import { AuthHost } from '../../features/auth/AuthHost.tsx';
import { TipOverlay } from '../../features/guide/TipOverlay.tsx';
import { MessageHost } from '../../features/messages/MessageHost.tsx';
import { ShellDialogs } from '../../features/shell/ShellDialogs.tsx';
import { useShell } from '../../features/shell/store.ts';
import { lazyDialog } from '../lazy-dialog.tsx';

const LazySettingsDialog = lazyDialog<{ opened: boolean }>(() =>
  import('../../features/settings/SettingsPanel.tsx').then((m) => m.SettingsDialog),
);

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
  return (
    <>
      <Notifications autoClose={INTERVALS.toast} />
      <AuthHost />
      <SettingsDialog />
      <ShellDialogs />
      <MessageHost />
      <TipOverlay />
    </>
  );
}
