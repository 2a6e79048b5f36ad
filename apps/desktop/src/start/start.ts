import type { DesktopConnection, SkyferryDesktopBridge } from '@skyferry/contract';
import type { StartPageBridge } from '../bridge.ts';

/**
 * The shell's start page: "On this computer" or "Connect to a server". It talks to the main
 * process through the same bridge as the web app (the router lets this page choose the server).
 */
interface StartGlobals {
  skyferryDesktop?: SkyferryDesktopBridge & StartPageBridge;
  document: {
    getElementById(id: string): StartElement | null;
  };
  location: { search: string };
}
interface StartElement {
  hidden: boolean;
  textContent: string | null;
  disabled: boolean;
  value: string;
  addEventListener(type: string, listener: (event: { preventDefault(): void }) => void): void;
}

const g = globalThis as unknown as StartGlobals;
const bridge = g.skyferryDesktop;
const el = (id: string) => g.document.getElementById(id);
const message = el('message');
const statusLine = el('status');

const PHASES: Record<string, string> = {
  starting: 'Starting Skyferry on this computer…',
  connecting: 'Connecting to the server…',
};

function showMessage(text: string): void {
  if (!message) return;
  message.textContent = text;
  message.hidden = text === '';
}

function busy(on: boolean): void {
  for (const id of ['local', 'remote', 'url']) {
    const e = el(id);
    if (e) e.disabled = on;
  }
}

async function choose(run: () => Promise<DesktopConnection>): Promise<void> {
  showMessage('');
  busy(true);
  try {
    await run();
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    // Electron prefixes errors from the main process with where they came from.
    showMessage(text.replace(/^Error invoking remote method '[^']+': (Error: )?/, ''));
    if (statusLine) statusLine.textContent = '';
  } finally {
    busy(false);
  }
}

const initial = new URLSearchParams(g.location.search).get('message');
if (initial) showMessage(initial);

if (bridge) {
  bridge.onConnectionStatus((s) => {
    if (statusLine) statusLine.textContent = PHASES[s.phase] ?? '';
  });
  el('minimize')?.addEventListener('click', () => bridge.minimize());
  el('maximize')?.addEventListener('click', () => bridge.toggleMaximize());
  el('close')?.addEventListener('click', () => bridge.close());
  el('local')?.addEventListener('click', () => void choose(() => bridge.setConnection({ mode: 'local' })));
  el('remote-form')?.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = el('url')?.value ?? '';
    void choose(() => bridge.setConnection({ mode: 'remote', url }));
  });
  void bridge.getConnection?.().then((c) => {
    const input = el('url');
    if (input && c.mode === 'remote' && c.serverUrl) input.value = c.serverUrl;
  });
}
