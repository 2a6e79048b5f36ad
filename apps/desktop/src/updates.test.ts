import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DesktopUpdateState } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { INSTALLER, realUpdater, startUpdateFeed, type Feed } from './testing/update-feed.ts';
import { UpdateController } from './updates.ts';

// The update check against a real update feed: a loopback HTTP server laid out as electron-builder
// publishes to a generic provider, read by electron-updater's own updater (the Linux .deb one on
// this machine), driven by the controller the shell uses.

let feed: Feed;
let dir: string;

beforeEach(async () => {
  feed = await startUpdateFeed();
  dir = mkdtempSync(join(tmpdir(), 'sf-updates-'));
});
afterEach(async () => {
  await feed.close();
  rmSync(dir, { recursive: true, force: true });
});

function controllerFor(version: string) {
  const installs = vi.fn();
  const updater = realUpdater(feed.url, version, dir, installs);
  const states: DesktopUpdateState[] = [];
  const controller = new UpdateController({ updater, currentVersion: version, onState: (s) => states.push(s) });
  return { controller, states, installs };
}

describe('update check over electron-updater and a generic feed', () => {
  it('shows a new version, downloads it with progress and installs it at once', async () => {
    feed.set({ version: '1.2.0', notes: 'Faster transfers.' });
    const { controller, states, installs } = controllerFor('1.0.0');

    const info = await controller.check();
    expect(info).toEqual({
      step: 'info',
      version: '1.2.0',
      size: INSTALLER.length,
      releaseDate: '2026-11-20T10:00:00.000Z',
      notes: 'Faster transfers.',
      mandatory: false,
    });
    expect(states[0]).toEqual({ step: 'loading' });
    expect(feed.requests.some((r) => r.path === '/latest-linux.yml')).toBe(true);

    const done = await controller.download();
    expect(done).toEqual({ step: 'downloaded', version: '1.2.0', mandatory: false });
    const steps = states.map((s) => s.step);
    expect(steps.slice(steps.indexOf('downloading'))).toContain('downloaded');
    const percents = states.flatMap((s) => (s.step === 'downloading' ? [s.percent] : []));
    expect(percents[0]).toBe(0);
    expect(Math.max(...percents)).toBeGreaterThan(0);
    expect(installs).toHaveBeenCalledWith(false, true);
  });

  it('says "latest" when the feed has the installed version', async () => {
    feed.set({ version: '1.0.0' });
    const { controller } = controllerFor('1.0.0');
    expect(await controller.check()).toEqual({ step: 'latest', version: '1.0.0' });
  });

  it('shows "latest" when the check fails', async () => {
    feed.set('down');
    const { controller, states } = controllerFor('1.0.0');
    expect(await controller.check()).toEqual({ step: 'latest', version: '1.0.0' });
    expect(states.map((s) => s.step)).toEqual(['loading', 'latest']);
  });

  it('offers retry when the download fails its checksum, and retry succeeds once the file is right', async () => {
    feed.set({ version: '1.3.0', corrupt: true });
    const { controller, installs } = controllerFor('1.0.0');
    await controller.check();
    expect(await controller.download()).toEqual({ step: 'retry', version: '1.3.0', mandatory: false });
    expect(installs).not.toHaveBeenCalled();
    feed.set({ version: '1.3.0' });
    expect((await controller.download()).step).toBe('downloaded');
    expect(installs).toHaveBeenCalledTimes(1);
  });

  it('marks a version the feed calls mandatory, and a check during the upgrade keeps the upgrade', async () => {
    feed.set({ version: '2.0.0', mandatory: true });
    const { controller } = controllerFor('1.0.0');
    expect(await controller.check()).toMatchObject({ step: 'info', version: '2.0.0', mandatory: true });
    const downloading = controller.download();
    // Opening the modal again mid-upgrade shows the upgrade, without asking the feed again.
    const checks = feed.requests.filter((r) => r.path.endsWith('.yml')).length;
    expect((await controller.check()).step).toBe('downloading');
    expect(feed.requests.filter((r) => r.path.endsWith('.yml')).length).toBe(checks);
    expect(await downloading).toEqual({ step: 'downloaded', version: '2.0.0', mandatory: true });
  });

  it('answers "latest" when no feed is configured', async () => {
    const states: DesktopUpdateState[] = [];
    const controller = new UpdateController({ updater: null, currentVersion: '1.0.0', onState: (s) => states.push(s) });
    expect(await controller.check()).toEqual({ step: 'latest', version: '1.0.0' });
    expect(await controller.download()).toEqual({ step: 'latest', version: '1.0.0' });
  });
});
