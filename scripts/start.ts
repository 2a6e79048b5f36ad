/**
 * `npm start`: builds the web app (unless it is up to date), starts Skyferry with the embedded defaults (SQLite in ./data,
 * in-process queue, mail to ./data/outbox) and opens it in the browser.
 * Set SKYFERRY_OPEN=0 to skip opening a browser.
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { STAMP_FILE, webBuildIsCurrent, webSourceStamp } from './web-build.ts';

const root = resolve(import.meta.dirname, '..');

// An unchanged web app is not built again (SKYFERRY_REBUILD=1 builds it anyway).
if (process.env.SKYFERRY_REBUILD !== '1' && webBuildIsCurrent(root)) {
  console.log('The web app is up to date.');
} else {
  console.log('Building the web app...');
  const stamp = webSourceStamp(root);
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  // The stamp of the sources as they were when the build began: an edit during it builds again.
  writeFileSync(resolve(root, 'apps/web/dist', STAMP_FILE), stamp + '\n');
}

const server = fork(resolve(root, 'apps/server/src/main.ts'), process.argv.slice(2), { cwd: root, stdio: 'inherit' });
server.on('message', (msg: { type?: string; url?: string }) => {
  if (msg.type !== 'listening' || !msg.url) return;
  if (process.env.SKYFERRY_OPEN === '0' || process.env.CI) return;
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [msg.url], { stdio: 'ignore', detached: true });
  child.on('error', () => console.log(`Open ${msg.url} in your browser.`));
  child.unref();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));
