import { desktopRuntime, type RuntimeEnv, type SkyferryDesktopBridge } from '@skyferry/contract';

/**
 * The desktop client (Electron preload) exposes `window.skyferryDesktop`, typed in the contract. The
 * web app only reads it: when it is absent, the app runs as the web client and desktop-only
 * features (window controls, path choosers, feedback, about, update check, log folder) stay hidden.
 */

export type {
  DesktopConnection,
  DesktopDownload,
  DesktopPlatform,
  DesktopTransfer,
  DesktopUpdateState,
  SkyferryDesktopBridge,
} from '@skyferry/contract';

declare global {
  interface Window {
    skyferryDesktop?: SkyferryDesktopBridge;
  }
}

export function desktopBridge(): SkyferryDesktopBridge | undefined {
  return typeof window === 'undefined' ? undefined : window.skyferryDesktop;
}

/** The runtime environment of spec section 3's settings state: web, app-win or app-mac. */
export function runtimeEnv(bridge: SkyferryDesktopBridge | undefined = desktopBridge()): RuntimeEnv {
  if (!bridge) return 'web';
  return desktopRuntime(bridge.platform);
}

export function isDesktop(): boolean {
  return runtimeEnv() !== 'web';
}
