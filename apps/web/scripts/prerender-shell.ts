/**
 * Writes the app shell (src/app/shell/prerender.tsx) into copies of the built index.html, one per
 * language, account kind and highlighted menu entry (`dist/shell/<lang>-<account>-<menu>.html`,
 * with their .br and .gz), and the routes they are for (`dist/shell/routes.json`: the sidebar
 * layout's). The server sends the one
 * that fits the request for those routes, so their header and menu paint before any script runs;
 * the app renders the same markup when it starts and replaces it.
 *
 *   node scripts/prerender-shell.ts   (after `vite build` and `vite build -c vite.shell.config.ts`)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  isRtl,
  shellFile,
  shellVariants,
  SHELL_MANIFEST,
  type Language,
  type ShellAccount,
  type ShellManifest,
} from '@skyferry/contract';
import { compressFile } from '../vite.plugins.ts';

const root = resolve(import.meta.dirname, '..');
const dist = join(root, 'dist');

// The app's modules read `window` when loaded (the desktop bridge); in Node there is none.
(globalThis as { window?: unknown }).window ??= globalThis;
const shell = (await import(pathToFileURL(join(root, 'node_modules', '.shell-build', 'prerender.js')).href)) as {
  renderShell(lang: Language, account: ShellAccount, path: string): Promise<string>;
  shellRoutes(): ShellManifest['routes'];
  shellMenus(): Record<string, string>;
};

const template = await readFile(join(dist, 'index.html'), 'utf8');
const MARKS = /<!--app-shell-->[\s\S]*<!--\/app-shell-->/;
if (!MARKS.test(template)) throw new Error('prerender-shell: index.html has no app-shell marks');
const stylesheets = template.match(/<link rel="stylesheet"[^>]*>/g) ?? [];

/** index.html with the shell in #root, and its stylesheets in the head: the shell is drawn with them. */
function page(lang: Language, markup: string): string {
  let html = template.replace(
    /<html lang="[^"]*">/,
    `<html lang="${lang === 'br' ? 'pt-BR' : lang}" dir="${isRtl(lang) ? 'rtl' : 'ltr'}" data-mantine-color-scheme="light">`,
  );
  for (const link of stylesheets) html = html.replace(link, '');
  html = html.replace('</head>', `  ${stylesheets.join('\n    ')}\n  </head>`);
  return html.replace(MARKS, () => markup);
}

await mkdir(join(dist, 'shell'), { recursive: true });
const routes = shell.shellRoutes();
const menus = Object.entries(shell.shellMenus());
const missing = routes.filter((r) => !menus.some(([menu]) => menu === r.menu));
if (missing.length > 0) throw new Error(`prerender-shell: no page to draw ${missing.map((r) => r.path).join(', ')} at`);
const written: Array<Promise<void>> = [];
for (const { lang, account } of shellVariants()) {
  for (const [menu, path] of menus) {
    const file = join(dist, shellFile(lang, account, menu));
    await writeFile(file, page(lang, await shell.renderShell(lang, account, path)));
    written.push(compressFile(file));
  }
}
await Promise.all(written);
const manifest: ShellManifest = { routes };
await writeFile(join(dist, SHELL_MANIFEST), `${JSON.stringify(manifest)}\n`);
process.stdout.write(`prerender-shell: ${written.length} shells in ${join(dist, 'shell')}\n`);
