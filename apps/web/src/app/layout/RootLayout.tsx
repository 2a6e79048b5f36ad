import { lazy, Suspense, useLayoutEffect } from 'react';
import { Outlet, useNavigate } from 'react-router';
import { syncSessionAcrossTabs } from '../../features/session/actions.ts';
import { setNavigator } from '../../features/session/navigation.ts';
import { patchSettings } from '../../features/session/store.ts';
import { runStartup, watchNetwork } from '../../features/startup/startup.ts';
import { withRestStyles } from '../lazy-styles.ts';
import { useFirstPaintDone } from './first-paint.ts';

const Hosts = lazy(() => withRestStyles(() => import('./Hosts.tsx')));

/**
 * Above every route: lets non-component code navigate, watches the network, and hosts the dialogs
 * and overlays any screen can open (Hosts: fetched after the first paint).
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
  const painted = useFirstPaintDone();
  return (
    <>
      <Outlet />
      {painted && (
        <Suspense fallback={null}>
          <Hosts />
        </Suspense>
      )}
    </>
  );
}
