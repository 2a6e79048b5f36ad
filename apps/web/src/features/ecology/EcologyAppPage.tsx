import { Box } from '@mantine/core';
import { useEffect } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { Header } from '../shell/Header.tsx';
import { ecologyApi } from './api.ts';
import { FRAME_TOP } from './AppFrames.tsx';
import { appIdOf, openApp, tabsStore } from './tabs.ts';

/**
 * /ecology/app (EcologyApp): the header with the app tabs above the app's frame (AppFrames shows
 * it). Without an app id the screen goes back one step; an app id with no open tab opens the app.
 */
export function EcologyAppPage() {
  const location = useLocation();
  const navigate = useNavigate();
  const params = new URLSearchParams(location.search);
  const key = params.get('app_id');
  const functionId = params.get('function_id');
  useEffect(() => {
    const appId = appIdOf(key);
    if (appId === null) {
      void navigate(-1);
      return;
    }
    if (tabsStore.getState().tabs.some((t) => t.key === key)) return;
    let live = true;
    ecologyApi
      .get(appId)
      .then((app) => {
        if (!live) return;
        const fn = functionId === null ? null : Number(functionId);
        if (!openApp(app, { functionId: Number.isInteger(fn) ? fn : null })) void navigate(-1);
      })
      .catch(() => live && void navigate('/ecology', { replace: true }));
    return () => {
      live = false;
    };
  }, [key, functionId, navigate]);
  return (
    <Box h={FRAME_TOP} style={{ borderBottom: '1px solid var(--mantine-color-gray-3)' }}>
      <Header />
    </Box>
  );
}
