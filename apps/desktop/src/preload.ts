import { contextBridge, ipcRenderer } from 'electron';
import { createBridge, infoFromArgv, type BridgeIpc } from './bridge.ts';

/**
 * The preload (sandboxed, context-isolated): exposes the bridge as `window.skyferryDesktop` and
 * nothing else. Bundled into one CommonJS file, since a sandboxed preload cannot load modules.
 */
const ipc: BridgeIpc = {
  invoke: (channel, ...args) => ipcRenderer.invoke(channel, ...args),
  on: (event, listener) => {
    const handler = (_event: unknown, payload: unknown) => listener(payload);
    ipcRenderer.on(event, handler);
    return () => {
      ipcRenderer.removeListener(event, handler);
    };
  },
};

const platform = process.platform === 'win32' || process.platform === 'darwin' ? process.platform : 'linux';
const info = infoFromArgv(process.argv) ?? { platform, version: '', maximized: false };
contextBridge.exposeInMainWorld('skyferryDesktop', createBridge(ipc, info));
