import { join, resolve } from 'node:path';

/**
 * Where the shell finds the parts it runs. From the repository (development, tests) the server
 * runs from its TypeScript sources and the web app from apps/web/dist; in an installed app both
 * come from the resources folder, where `npm run stage` put them (see scripts/stage.ts).
 */
export interface Layout {
  packaged: boolean;
  /** app.getAppPath(): apps/desktop in development. */
  appPath: string;
  /** process.resourcesPath of an installed app. */
  resourcesPath: string;
}

export function serverEntry(layout: Layout): string {
  return layout.packaged
    ? join(layout.resourcesPath, 'server', 'node_modules', '@skyferry', 'server', 'src', 'main.js')
    : resolve(layout.appPath, '..', 'server', 'src', 'main.ts');
}

export function webDist(layout: Layout): string {
  return layout.packaged ? join(layout.resourcesPath, 'web') : resolve(layout.appPath, '..', 'web', 'dist');
}

/** The shell's own pages (the start page) and the preload, built into dist/. */
export function distFile(layout: Layout, name: string): string {
  return join(layout.appPath, 'dist', name);
}
