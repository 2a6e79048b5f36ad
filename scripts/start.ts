/**
 * `npm start`: builds the web app, starts Skyferry with the embedded defaults (SQLite in ./data,
 * in-process queue, mail to ./data/outbox) and opens it in the browser.
 * Set SKYFERRY_OPEN=0 to skip opening a browser.
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

console.log('Building the web app...');
execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });

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
