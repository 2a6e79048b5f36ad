import type { DesktopUpdateState } from '@skyferry/contract';

/** What the controller reads of electron-updater's UpdateInfo (plus the feed's own `mandatory`). */
export interface UpdateInfoLike {
  version: string;
  files?: ReadonlyArray<{ size?: number }>;
  releaseDate?: string;
  releaseNotes?: string | ReadonlyArray<{ version: string; note: string | null }> | null;
  releaseName?: string | null;
  /** Set in the feed's latest.yml (`mandatory: true`) when users must upgrade. */
  mandatory?: unknown;
}

/** The part of electron-updater's AppUpdater the controller drives. */
export interface UpdaterLike {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  checkForUpdates(): Promise<{ isUpdateAvailable?: boolean; updateInfo: UpdateInfoLike } | null>;
  downloadUpdate(): Promise<unknown>;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
  on(event: 'download-progress', listener: (progress: { percent: number }) => void): unknown;
}

export interface UpdateControllerOptions {
  /** Null when no update feed is configured: every check answers "latest". */
  updater: UpdaterLike | null;
  currentVersion: string;
  onState: (state: DesktopUpdateState) => void;
  log?: (message: string) => void;
}

function notesOf(info: UpdateInfoLike): string {
  const notes = info.releaseNotes;
  if (typeof notes === 'string') return notes;
  if (Array.isArray(notes)) return notes.map((n) => n.note ?? '').join('\n\n');
  return '';
}

/**
 * The update check of spec section 4 as a state machine over electron-updater: loading, then
 * latest or info (size, release date, notes); Update Now downloads, and the downloaded version is
 * installed at once. A failed check shows "latest" unless an upgrade is already under way; a
 * failed download shows "retry". A feed that marks the version `mandatory` makes it a mandatory
 * upgrade: the web app's modal cannot dismiss it without the download going on.
 */
export class UpdateController {
  private state: DesktopUpdateState = { step: 'idle' };
  private readonly options: UpdateControllerOptions;
  private version = '';
  private mandatory = false;

  constructor(options: UpdateControllerOptions) {
    this.options = options;
    const updater = options.updater;
    if (updater) {
      // The modal decides when to download and install.
      updater.autoDownload = false;
      updater.autoInstallOnAppQuit = false;
      updater.on('download-progress', (p) => {
        if (this.state.step === 'downloading') {
          this.set({ ...this.state, percent: Math.max(0, Math.min(100, Math.round(p.percent))) });
        }
      });
    }
  }

  get current(): DesktopUpdateState {
    return this.state;
  }

  private set(next: DesktopUpdateState): DesktopUpdateState {
    this.state = next;
    this.options.onState(next);
    return next;
  }

  private upgrading(): boolean {
    return this.state.step === 'downloading' || this.state.step === 'downloaded';
  }

  /** Checks the feed (the modal opening starts it). */
  async check(): Promise<DesktopUpdateState> {
    if (this.upgrading() || this.state.step === 'loading') return this.state;
    const latest = (): DesktopUpdateState => this.set({ step: 'latest', version: this.options.currentVersion });
    const updater = this.options.updater;
    if (!updater) return latest();
    this.set({ step: 'loading' });
    try {
      const result = await updater.checkForUpdates();
      if (!result || result.isUpdateAvailable === false) return latest();
      const info = result.updateInfo;
      this.version = info.version;
      this.mandatory = info.mandatory === true;
      const size = info.files?.[0]?.size;
      return this.set({
        step: 'info',
        version: info.version,
        size: typeof size === 'number' ? size : null,
        releaseDate: info.releaseDate ?? null,
        notes: notesOf(info),
        mandatory: this.mandatory,
      });
    } catch (err) {
      this.options.log?.(`update check failed: ${err instanceof Error ? err.message : String(err)}`);
      return this.upgrading() ? this.state : latest();
    }
  }

  /** Update Now (and Retry): downloads, then installs at once. */
  async download(): Promise<DesktopUpdateState> {
    const updater = this.options.updater;
    if (!updater || (this.state.step !== 'info' && this.state.step !== 'retry')) return this.state;
    this.set({ step: 'downloading', version: this.version, percent: 0, mandatory: this.mandatory });
    try {
      await updater.downloadUpdate();
    } catch (err) {
      this.options.log?.(`update download failed: ${err instanceof Error ? err.message : String(err)}`);
      return this.set({ step: 'retry', version: this.version, mandatory: this.mandatory });
    }
    this.set({ step: 'downloaded', version: this.version, mandatory: this.mandatory });
    this.install();
    return this.state;
  }

  /** Quits and runs the installer of a downloaded update. */
  install(): void {
    if (this.state.step !== 'downloaded') return;
    this.options.updater?.quitAndInstall(false, true);
  }
}
