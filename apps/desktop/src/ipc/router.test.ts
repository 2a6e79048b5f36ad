import { describe, expect, it, vi } from 'vitest';
import { CHANNEL_ARGS, CHANNELS } from './channels.ts';
import { IpcRefusedError, IpcRouter, originOf, type HandlerMap, type IpcMainLike } from './router.ts';

const APP = 'http://127.0.0.1:4100';
const START = 'skyferry://start';

function router(appOrigin: string | null = APP) {
  const refused: string[] = [];
  const r = new IpcRouter({
    appOrigin: () => appOrigin,
    startOrigin: START,
    onRefused: (c, why) => refused.push(`${c} ${why}`),
  });
  const calls: Array<[string, unknown[]]> = [];
  const handlers = Object.fromEntries(
    Object.keys(CHANNEL_ARGS).map((channel) => [
      channel,
      (...args: unknown[]) => {
        calls.push([channel, args]);
        return `${channel} ok`;
      },
    ]),
  ) as unknown as HandlerMap;
  r.register(handlers);
  return { r, calls, refused };
}

const top = (url: string) => ({ url, parent: null });

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof IpcRefusedError) return err.reason;
    throw err;
  }
  return 'allowed';
}

describe('IPC router', () => {
  it('runs a call from the web app of the server the window shows, with its checked arguments', async () => {
    const { r, calls } = router();
    await expect(r.dispatch(CHANNELS.downloadSetPath, top(`${APP}/manage`), ['/home/me/Downloads'])).resolves.toBe(
      'download:set-path ok',
    );
    expect(calls).toEqual([['download:set-path', ['/home/me/Downloads']]]);
  });

  it('refuses pages of other origins, frames inside the page, and unknown channels', async () => {
    const { r, calls, refused } = router();
    expect(await refusal(r.dispatch(CHANNELS.logRead, top('https://evil.example/x'), []))).toBe('origin');
    expect(await refusal(r.dispatch(CHANNELS.logRead, top('http://127.0.0.1:4101/'), []))).toBe('origin');
    expect(await refusal(r.dispatch(CHANNELS.logRead, { url: `${APP}/`, parent: {} }, []))).toBe('frame');
    expect(await refusal(r.dispatch(CHANNELS.logRead, null, []))).toBe('frame');
    expect(await refusal(r.dispatch('shell:exec', top(`${APP}/`), ['rm -rf /']))).toBe('channel');
    expect(await refusal(r.dispatch('__proto__', top(`${APP}/`), []))).toBe('channel');
    expect(calls).toEqual([]);
    expect(refused).toHaveLength(6);
  });

  it('keeps the start page and the web app to their own channels', async () => {
    const { r } = router();
    // The web app (a remote operator's page, perhaps) cannot point the shell at another server...
    expect(await refusal(r.dispatch(CHANNELS.connectionSet, top(`${APP}/`), [{ mode: 'remote', url: 'x' }]))).toBe(
      'origin',
    );
    // ...and the start page cannot read the log or save files.
    expect(await refusal(r.dispatch(CHANNELS.logRead, top(`${START}/index.html`), []))).toBe('origin');
    expect(await refusal(r.dispatch(CHANNELS.connectionSet, top(`${START}/index.html`), [{ mode: 'local' }]))).toBe(
      'allowed',
    );
    expect(await refusal(r.dispatch(CHANNELS.windowClose, top(`${START}/index.html`), []))).toBe('allowed');
  });

  it('refuses everything from the server origin while the start page is shown', async () => {
    const { r } = router(null);
    expect(await refusal(r.dispatch(CHANNELS.windowMinimize, top(`${APP}/`), []))).toBe('origin');
  });

  it('refuses arguments the channel does not take', async () => {
    const { r, calls } = router();
    const from = top(`${APP}/`);
    expect(await refusal(r.dispatch(CHANNELS.windowMinimize, from, ['extra']))).toBe('args');
    expect(await refusal(r.dispatch(CHANNELS.downloadOpen, from, [42]))).toBe('args');
    expect(await refusal(r.dispatch(CHANNELS.downloadOpen, from, ['/tmp/a\0b']))).toBe('args');
    expect(await refusal(r.dispatch(CHANNELS.chooseDirectory, from, [{ defaultPath: '/x', evil: true }]))).toBe('args');
    expect(await refusal(r.dispatch(CHANNELS.traySetTransfers, from, [[{ id: 'a', name: 'n', percent: 101 }]]))).toBe(
      'args',
    );
    expect(await refusal(r.dispatch(CHANNELS.notifyTaskEnded, from, [{ title: '', body: 'x' }]))).toBe('args');
    expect(await refusal(r.dispatch(CHANNELS.chooseDirectory, from, []))).toBe('allowed');
    expect(calls.map(([c]) => c)).toEqual(['dialog:choose-directory']);
  });

  it('registers every channel with ipcMain and checks the real sending frame', async () => {
    const { r } = router();
    const registered = new Map<string, Parameters<IpcMainLike['handle']>[1]>();
    const ipcMain: IpcMainLike = {
      handle: (channel, listener) => registered.set(channel, listener),
      removeHandler: vi.fn((channel: string) => registered.delete(channel)),
    };
    const detach = r.attach(ipcMain);
    expect([...registered.keys()].sort()).toEqual(Object.values(CHANNELS).sort());
    const listener = registered.get(CHANNELS.windowIsMaximized)!;
    await expect(listener({ senderFrame: top(`${APP}/`) })).resolves.toBe('window:is-maximized ok');
    await expect(listener({ senderFrame: top('https://evil.example/') })).rejects.toThrow(IpcRefusedError);
    detach();
    expect(registered.size).toBe(0);
  });

  it('reads origins of web and custom-scheme pages', () => {
    expect(originOf('http://127.0.0.1:4100/manage?x=1')).toBe('http://127.0.0.1:4100');
    expect(originOf('skyferry://start/index.html')).toBe('skyferry://start');
    expect(originOf('file:///etc/passwd')).toBeNull();
    expect(originOf('not a url')).toBeNull();
  });
});
