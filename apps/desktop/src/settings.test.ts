import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DesktopTransfer } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { SAVED_FILES_KEPT, SettingsStore } from './settings.ts';
import { LogFile } from './logs.ts';
import { tempDirs } from './test-support.ts';
import { trayMenu, ENGLISH_TRAY_LABELS, TRAY_LISTED } from './tray.ts';

const temp = tempDirs('sf-settings-');

describe('shell settings', () => {
  it('remembers the server choice, its port and the download folder across starts (owner only)', () => {
    const file = join(temp(), 'settings.json');
    new SettingsStore(file).update({ mode: 'remote', remoteUrl: 'https://sf.example.com', serverPort: 41234 });
    const again = new SettingsStore(file).get();
    expect(again).toMatchObject({ mode: 'remote', remoteUrl: 'https://sf.example.com', serverPort: 41234 });
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('starts from the defaults when the file is damaged', () => {
    const file = join(temp(), 'settings.json');
    writeFileSync(file, '{"mode": "sideways"');
    expect(new SettingsStore(file).get()).toMatchObject({ mode: null, downloadPath: '', savedFiles: [] });
  });

  it('keeps the newest saved files only', () => {
    const file = join(temp(), 'settings.json');
    const s = new SettingsStore(file);
    for (let i = 0; i < SAVED_FILES_KEPT + 3; i += 1) s.rememberSaved(`/d/f${i}`);
    expect(s.isSaved('/d/f0')).toBe(false);
    expect(s.isSaved(`/d/f${SAVED_FILES_KEPT + 2}`)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8')).savedFiles).toHaveLength(SAVED_FILES_KEPT);
  });
});

describe('log file', () => {
  it('attaches the end of the log from a whole line', () => {
    const log = new LogFile(temp());
    for (let i = 0; i < 200; i += 1) log.write('server', `line ${i} ${'x'.repeat(50)}`);
    const tail = log.tail(1000);
    expect(tail.name).toBe('skyferry.log');
    expect(tail.text.length).toBeLessThanOrEqual(1000);
    expect(tail.text.split('\n')[0]).toMatch(/^\d{4}-\d\d-\d\dT.* \[server\] line \d+ x+$/);
    expect(tail.text).toContain('line 199');
  });
});

describe('tray menu', () => {
  it('lists running transfers with their progress, then Show and Quit', () => {
    const actions = { show: () => undefined, changeServer: () => undefined, quit: () => undefined };
    const empty = trayMenu([], ENGLISH_TRAY_LABELS, actions);
    expect(empty.tooltip).toBe('Skyferry: no transfers running');
    const many: DesktopTransfer[] = Array.from({ length: TRAY_LISTED + 2 }, (_, i) => ({
      id: `t${i}`,
      name: `Photos → Backup ${i}`,
      percent: i,
    }));
    many[0] = { id: 't0', name: 'Scanning', percent: null };
    const menu = trayMenu(many, ENGLISH_TRAY_LABELS, actions);
    expect(menu.tooltip).toBe(`Skyferry: ${TRAY_LISTED + 2} transfers running`);
    const labels = menu.items.map((i) => i.label ?? i.type);
    expect(labels).toContain('Scanning');
    expect(labels).toContain('Photos → Backup 3 — 3%');
    expect(labels).toContain('+2');
    expect(labels.slice(-4)).toEqual(['separator', 'Show Skyferry', 'Change server…', 'Quit']);
  });
});
