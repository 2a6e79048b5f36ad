import { describe, expect, it } from 'vitest';
import { createBridge, encodeInfo, infoFromArgv, type BridgeIpc } from './bridge.ts';
import { CHANNELS, EVENTS } from './ipc/names.ts';

function fakeIpc(answers: Record<string, unknown> = {}) {
  const invoked: Array<[string, unknown[]]> = [];
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const ipc: BridgeIpc = {
    invoke: async (channel, ...args) => {
      invoked.push([channel, args]);
      return answers[channel];
    },
    on: (event, listener) => {
      const set = listeners.get(event) ?? new Set();
      set.add(listener);
      listeners.set(event, set);
      return () => set.delete(listener);
    },
  };
  const emit = (event: string, payload: unknown) => listeners.get(event)?.forEach((l) => l(payload));
  return { ipc, invoked, emit };
}

describe('preload bridge', () => {
  it('passes platform and version through the window arguments', () => {
    const arg = encodeInfo({ platform: 'darwin', version: '1.4.0', maximized: true });
    expect(infoFromArgv(['electron', '--type=renderer', arg])).toEqual({
      platform: 'darwin',
      version: '1.4.0',
      maximized: true,
    });
    expect(infoFromArgv(['--skyferry-info=%7Bbroken'])).toBeNull();
    expect(infoFromArgv([encodeInfo({ platform: 'beos' as 'linux', version: '', maximized: false })])).toBeNull();
  });

  it('sends each call on its channel and answers what the main process answers', async () => {
    const { ipc, invoked } = fakeIpc({
      [CHANNELS.chooseDirectory]: '/home/me/Downloads',
      [CHANNELS.downloadSave]: { id: 'd1', state: 'completed' },
    });
    const bridge = createBridge(ipc, { platform: 'win32', version: '1.0.0', maximized: false });
    expect(bridge.platform).toBe('win32');
    await expect(bridge.chooseDirectory?.({ defaultPath: '/home/me' })).resolves.toBe('/home/me/Downloads');
    await expect(bridge.chooseDirectory?.()).resolves.toBe('/home/me/Downloads');
    await expect(bridge.saveUrl?.({ url: 'http://127.0.0.1:1/f', name: 'f.txt' })).resolves.toMatchObject({
      state: 'completed',
    });
    bridge.minimize();
    bridge.showInFolder?.('/home/me/Downloads/f.txt');
    expect(invoked).toEqual([
      [CHANNELS.chooseDirectory, [{ defaultPath: '/home/me' }]],
      [CHANNELS.chooseDirectory, []],
      [CHANNELS.downloadSave, [{ url: 'http://127.0.0.1:1/f', name: 'f.txt' }]],
      [CHANNELS.windowMinimize, []],
      [CHANNELS.downloadShow, ['/home/me/Downloads/f.txt']],
    ]);
  });

  it('answers isMaximized at once, from the click and then from the window', () => {
    const { ipc, emit } = fakeIpc();
    const bridge = createBridge(ipc, { platform: 'linux', version: '1.0.0', maximized: false });
    const seen: boolean[] = [];
    const off = bridge.onMaximizedChange?.((m) => seen.push(m));
    expect(bridge.isMaximized?.()).toBe(false);
    bridge.toggleMaximize();
    expect(bridge.isMaximized?.()).toBe(true);
    emit(EVENTS.maximized, false);
    expect(bridge.isMaximized?.()).toBe(false);
    off?.();
    emit(EVENTS.maximized, true);
    expect(seen).toEqual([false]);
    expect(bridge.isMaximized?.()).toBe(true);
  });

  it('does not throw into the page when a fire-and-forget call is refused', async () => {
    const ipc: BridgeIpc = { invoke: () => Promise.reject(new Error('refused')), on: () => () => undefined };
    const bridge = createBridge(ipc, { platform: 'linux', version: '1.0.0', maximized: false });
    expect(() => bridge.close()).not.toThrow();
    await new Promise((r) => setTimeout(r, 0));
  });
});
