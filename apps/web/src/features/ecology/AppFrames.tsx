import { APP_PORT_OFFER, APP_REQUESTS, appMessage, parseAppMessage } from '@skyferry/contract';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation } from 'react-router';
import { onSessionEvent } from '../session/events.ts';
import {
  acceptAppMessage,
  frameUrlOf,
  handleAppRequest,
  sandboxOf,
  sendTokenUpdate,
  targetOriginOf,
  type HostLink,
} from './host.ts';
import { closeLoginRequiredApps, dropTokens, isOfficeTab, officeOf, useAppTabs, type AppTab } from './tabs.ts';

/** Height of the header above the frames (AppLayout's header). */
export const FRAME_TOP = 52;

/**
 * The open apps' frames, mounted for as long as their tabs are open (switching tabs or screens
 * keeps each app's state) and shown on /ecology/app only, the route's app_id selecting one. A tab
 * shown again without is_keeping reloads its address.
 */
export function AppFrames() {
  const tabs = useAppTabs();
  const location = useLocation();
  const params = new URLSearchParams(location.search);
  const onRoute = location.pathname === '/ecology/app';
  const active = onRoute ? params.get('app_id') : null;
  const keeping = params.has('is_keeping');
  const [reloads, setReloads] = useState<Record<string, number>>({});
  const [shown, setShown] = useState<string | null>(null);
  if (active !== shown) {
    setShown(active);
    if (active && shown !== null && !keeping) setReloads((r) => ({ ...r, [active]: (r[active] ?? 0) + 1 }));
  }
  useEffect(() => {
    const offLogout = onSessionEvent('logout', () => {
      dropTokens();
      closeLoginRequiredApps();
    });
    const offLogin = onSessionEvent('login', dropTokens);
    return () => {
      offLogout();
      offLogin();
    };
  }, []);
  if (tabs.length === 0) return null;
  return (
    <div
      style={{
        position: 'fixed',
        insetInline: 0,
        bottom: 0,
        top: FRAME_TOP,
        display: onRoute ? 'block' : 'none',
        zIndex: 150,
        background: 'var(--mantine-color-body)',
      }}
      data-testid="app-frames"
    >
      {tabs.map((tab) => (
        <AppFrame key={`${tab.key}:${reloads[tab.key] ?? 0}`} tab={tab} visible={tab.key === active} />
      ))}
    </div>
  );
}

function AppFrame({ tab, visible }: { tab: AppTab; visible: boolean }) {
  const { t, i18n } = useTranslation('apps');
  const ref = useRef<HTMLIFrameElement>(null);
  // An office app's address carries its WOPI token: it is asked for first.
  const [src, setSrc] = useState(() => (isOfficeTab(tab) ? '' : frameUrlOf(tab, i18n.language)));
  useEffect(() => {
    if (!isOfficeTab(tab)) return;
    let live = true;
    officeOf(tab).then(
      (office) => live && setSrc(office.url),
      (err: unknown) => console.error('office app failed to open', err),
    );
    return () => {
      live = false;
    };
  }, [tab]);
  // A first-party app's private channel (see APP_PORT_OFFER), for the document the frame first loaded.
  const port = useRef<MessagePort | null>(null);
  const loads = useRef(0);
  const link = useMemo<HostLink>(
    () => ({
      tab,
      post: (message) => {
        if (tab.app.first_party) port.current?.postMessage(message);
        else ref.current?.contentWindow?.postMessage(message, targetOriginOf(tab.app));
      },
      language: () => i18n.language,
    }),
    [tab, i18n],
  );
  const answer = useCallback(
    (message: ReturnType<typeof parseAppMessage>) => {
      if (!message) return;
      handleAppRequest(link, message).catch((err: unknown) => console.error('app request failed', err));
    },
    [link],
  );
  useEffect(() => {
    // External apps speak through window messages, from their frame and registered origin only.
    const onMessage = (event: MessageEvent) => {
      if (!tab.app.first_party) answer(acceptAppMessage(event, ref.current?.contentWindow ?? null, tab.app));
    };
    window.addEventListener('message', onMessage);
    const offLogout = onSessionEvent('logout', () => link.post(appMessage(APP_REQUESTS.logout)));
    const offLogin = onSessionEvent('login', () => {
      sendTokenUpdate(link).catch((err: unknown) => console.error('token update failed', err));
    });
    return () => {
      window.removeEventListener('message', onMessage);
      offLogout();
      offLogin();
      port.current?.close();
    };
  }, [tab, link, answer]);
  /**
   * The first document of a first-party app's frame gets the channel. A later document (the app
   * navigated its frame away: a link, a script) gets nothing, and the frame is put back.
   */
  const onLoad = () => {
    if (!tab.app.first_party) return;
    const frame = ref.current;
    loads.current += 1;
    port.current?.close();
    port.current = null;
    if (!frame?.contentWindow) return;
    if (loads.current % 2 === 0) {
      frame.src = src;
      return;
    }
    const channel = new MessageChannel();
    channel.port1.onmessage = (event: MessageEvent) => answer(parseAppMessage(event.data));
    port.current = channel.port1;
    // The sandbox's opaque origin has no name to target; the port goes to this document alone.
    const [type, request] = APP_PORT_OFFER.split('/');
    frame.contentWindow.postMessage({ ...appMessage(APP_REQUESTS.loaded), type, request }, '*', [channel.port2]);
  };
  return (
    <iframe
      ref={ref}
      src={src || undefined}
      title={t('frameTitle', { name: tab.label })}
      sandbox={sandboxOf(tab.app, window.location.origin)}
      allow="fullscreen"
      referrerPolicy="no-referrer"
      onLoad={onLoad}
      style={{ display: visible ? 'block' : 'none', border: 0, width: '100%', height: '100%' }}
      data-testid="app-frame"
      data-app-key={tab.key}
    />
  );
}
