import { useLayoutEffect } from 'react';
import { Outlet, useNavigate } from 'react-router';
import { AuthHost } from '../../features/auth/AuthHost.tsx';
import { TipOverlay } from '../../features/guide/TipOverlay.tsx';
import { MessageHost } from '../../features/messages/MessageHost.tsx';
import { syncSessionAcrossTabs } from '../../features/session/actions.ts';
import { setNavigator } from '../../features/session/navigation.ts';
import { patchSettings } from '../../features/session/store.ts';
import { SettingsDialog } from '../../features/settings/SettingsPanel.tsx';
import { ShellDialogs } from '../../features/shell/ShellDialogs.tsx';
import { runStartup, watchNetwork } from '../../features/startup/startup.ts';
import { DesktopTaskReporter } from '../../features/tasks/desktop-reporter.ts';

/**
 * Above every route: lets non-component code navigate, watches the network, and hosts the dialogs
 * and overlays any screen can open (messages, sign-in, settings, shell dialogs, tips).
 */
export function RootLayout() {
  const navigate = useNavigate();
  // A layout effect: installed before any screen's start-up effect may navigate.
  useLayoutEffect(() => {
    setNavigator((to, options) => void navigate(to, options));
    return () => setNavigator(null);
  }, [navigate]);
  useLayoutEffect(() => watchNetwork({ onBackOnline: () => void runStartup() }), []);
  useLayoutEffect(() => syncSessionAcrossTabs(), []);
  // The settings state's browser-focus flag (buying polls user info when the window regains focus).
  useLayoutEffect(() => {
    const focus = () => patchSettings({ focused: true });
    const blur = () => patchSettings({ focused: false });
    window.addEventListener('focus', focus);
    window.addEventListener('blur', blur);
    return () => {
      window.removeEventListener('focus', focus);
      window.removeEventListener('blur', blur);
    };
  }, []);
  return (
    <>
      <Outlet />
      <AuthHost />
      <SettingsDialog />
      <ShellDialogs />
      <MessageHost />
      <TipOverlay />
      <DesktopTaskReporter />
    </>
  );
}
