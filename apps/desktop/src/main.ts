import * as electron from 'electron';
import electronUpdater from 'electron-updater';
import { runShell } from './shell.ts';

/** The Electron main process entry (bundled into dist/main.cjs by scripts/build.ts). */
runShell({ electron, updater: () => electronUpdater.autoUpdater });
