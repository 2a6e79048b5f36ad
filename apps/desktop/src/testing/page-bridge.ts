import { createBridge, type BridgeInfo, type BridgeIpc } from '../bridge.ts';

/**
 * For the browser journey: the preload's bridge in a plain page, over a fake IPC whose calls go to
 * the test process (a function the journey exposes, running the main process's real router and
 * handlers) and whose messages come back through `__skyferryEmit`. Built into one script and
 * injected before the page's own scripts, as the preload is.
 */
interface PageGlobals {
  __skyferryInvoke(channel: string, args: unknown[]): Promise<unknown>;
  __skyferryEmit?: (event: string, payload: unknown) => void;
  __skyferryInfo: BridgeInfo;
  skyferryDesktop?: unknown;
}

const g = globalThis as unknown as PageGlobals;
const listeners = new Map<string, Set<(payload: unknown) => void>>();
const ipc: BridgeIpc = {
  invoke: (channel, ...args) => g.__skyferryInvoke(channel, args),
  on: (event, listener) => {
    const set = listeners.get(event) ?? new Set();
    set.add(listener);
    listeners.set(event, set);
    return () => {
      set.delete(listener);
    };
  },
};
g.__skyferryEmit = (event, payload) => listeners.get(event)?.forEach((l) => l(payload));
g.skyferryDesktop = createBridge(ipc, g.__skyferryInfo);
