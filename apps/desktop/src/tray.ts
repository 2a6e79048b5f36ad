import type { DesktopTransfer } from '@skyferry/contract';

/** A menu entry as Electron's Menu.buildFromTemplate takes it (the part the tray uses). */
export interface TrayMenuItem {
  label?: string;
  type?: 'normal' | 'separator';
  enabled?: boolean;
  click?: () => void;
}

export interface TrayLabels {
  none: string;
  running: (count: number) => string;
  show: string;
  changeServer: string;
  quit: string;
}

/** How many transfers the menu lists by name (the rest are counted). */
export const TRAY_LISTED = 10;

function line(t: DesktopTransfer): string {
  const name = t.name.length > 48 ? `${t.name.slice(0, 22)}…${t.name.slice(-22)}` : t.name;
  return t.percent === null ? name : `${name} — ${Math.round(t.percent)}%`;
}

/** The tray's menu: the running transfers (by name and progress), then Show, Change server and Quit. */
export function trayMenu(
  transfers: readonly DesktopTransfer[],
  labels: TrayLabels,
  actions: { show(): void; changeServer(): void; quit(): void },
): { tooltip: string; items: TrayMenuItem[] } {
  const tooltip = transfers.length ? labels.running(transfers.length) : labels.none;
  const items: TrayMenuItem[] = [{ label: tooltip, enabled: false }];
  for (const t of transfers.slice(0, TRAY_LISTED)) items.push({ label: line(t), enabled: false });
  if (transfers.length > TRAY_LISTED) items.push({ label: `+${transfers.length - TRAY_LISTED}`, enabled: false });
  items.push(
    { type: 'separator' },
    { label: labels.show, click: actions.show },
    { label: labels.changeServer, click: actions.changeServer },
    { label: labels.quit, click: actions.quit },
  );
  return { tooltip, items };
}

export const ENGLISH_TRAY_LABELS: TrayLabels = {
  none: 'Skyferry: no transfers running',
  running: (n) => `Skyferry: ${n} transfer${n === 1 ? '' : 's'} running`,
  show: 'Show Skyferry',
  changeServer: 'Change server…',
  quit: 'Quit',
};
