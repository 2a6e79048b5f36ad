/**
 * `npm run build:cli`: the command line as JavaScript (apps/cli/dist/skyferry.mjs, with the parts
 * loaded on demand, such as the SFTP, FTP and WebDAV backends and the operator commands, in
 * dist/chunks/; its npm dependencies left outside), with the list of the sources it was made from. The bin runs it while
 * every one of those sources is unchanged (same modification time and size), else the TypeScript
 * itself: a start without Node's type stripper and about 150 module loads (half the time or less).
 */
import { readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';
import { version } from './src/help.js';
import { manPage } from './src/man.js';

const here = import.meta.dirname;
// Another folder may be named (tests); the bin looks in dist/ beside its own folder.
const dist = process.argv[2] ? resolve(process.argv[2]) : join(here, 'dist');
const started = Date.now();
const bundled = (id: string) => id.startsWith('.') || id.startsWith('/') || id.startsWith('@skyferry/');
const out = await build({
  input: join(here, 'src', 'main.ts'),
  platform: 'node',
  external: (id) => id.startsWith('node:') || builtinModules.includes(id) || !bundled(id),
  // Dynamic imports stay chunks of their own, so their npm dependencies load only when used.
  output: { dir: dist, entryFileNames: 'skyferry.tmp.mjs', chunkFileNames: 'chunks/[name]-[hash].mjs', format: 'esm' },
  logLevel: 'warn',
});
const ids = out.output.flatMap((o) => (o.type === 'chunk' ? o.moduleIds : [])).filter((id) => id.startsWith('/'));
const sources = await Promise.all(
  ids.map(async (id) => {
    const s = await stat(id);
    return [id, s.mtimeMs, s.size] as const;
  }),
);
// The bundle first, then the list: a bin started meanwhile sees an old list (and runs the sources).
await rename(join(dist, 'skyferry.tmp.mjs'), join(dist, 'skyferry.mjs'));
await writeFile(join(dist, 'sources.tmp.json'), JSON.stringify(sources));
await rename(join(dist, 'sources.tmp.json'), join(dist, 'sources.json'));
// Chunks of earlier builds (their names carry their content's hash).
const chunks = new Set(out.output.map((o) => o.fileName));
for (const name of await readdir(join(dist, 'chunks')).catch(() => [])) {
  if (!chunks.has(`chunks/${name}`)) await rm(join(dist, 'chunks', name), { force: true });
}
// The manual page (the package's "man" entry), from the help text of this build.
await writeFile(join(dist, 'skyferry.1'), manPage(await version(), new Date().toISOString().slice(0, 10)));
process.stdout.write(
  `built ${join(dist, 'skyferry.mjs')} from ${sources.length} sources in ${Date.now() - started} ms\n`,
);
