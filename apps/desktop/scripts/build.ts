import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';
import sharp from 'sharp';

/**
 * Builds the shell into dist/: the main process (CommonJS, Electron and electron-updater left to
 * the app's node_modules), the preload (one CommonJS file, as a sandboxed preload must be), the
 * start page and the icons (rendered from the web app's logo).
 */
const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

export async function buildDesktop(): Promise<void> {
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(join(dist, 'start'), { recursive: true });
  await build([
    {
      input: join(src, 'main.ts'),
      platform: 'node',
      external: ['electron', 'electron-updater'],
      output: { file: join(dist, 'main.cjs'), format: 'cjs' },
      logLevel: 'warn',
    },
    {
      input: join(src, 'preload.ts'),
      platform: 'node',
      external: ['electron'],
      output: { file: join(dist, 'preload.cjs'), format: 'cjs' },
      logLevel: 'warn',
    },
    {
      input: join(src, 'start', 'start.ts'),
      platform: 'browser',
      output: { file: join(dist, 'start', 'start.js'), format: 'iife' },
      logLevel: 'warn',
    },
  ]);
  for (const file of ['index.html', 'start.css']) copyFileSync(join(src, 'start', file), join(dist, 'start', file));
  const logo = resolve(root, '..', 'web', 'public', 'favicon.svg');
  mkdirSync(join(root, 'build'), { recursive: true });
  await sharp(logo, { density: 384 }).resize(256, 256).png().toFile(join(dist, 'icon.png'));
  // electron-builder makes the Windows .ico and the macOS .icns from this one.
  await sharp(logo, { density: 768 })
    .resize(1024, 1024)
    .png()
    .toFile(join(root, 'build', 'icon.png'));
}

if (import.meta.main) await buildDesktop();
