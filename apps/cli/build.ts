/**
 * `npm run build:cli`: the command line as one JavaScript file (apps/cli/dist/skyferry.mjs, its npm
 * dependencies left outside), with the list of the sources it was made from. The bin runs it while
 * every one of those sources is unchanged (same modification time and size), else the TypeScript
 * itself: a start without Node's type stripper and about 150 module loads (half the time or less).
 */
import { rename, stat, writeFile } from 'node:fs/promises';
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
  output: { file: join(dist, 'skyferry.tmp.mjs'), format: 'esm', codeSplitting: false },
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
// The manual page (the package's "man" entry), from the help text of this build.
await writeFile(join(dist, 'skyferry.1'), manPage(await version(), new Date().toISOString().slice(0, 10)));
process.stdout.write(
  `built ${join(dist, 'skyferry.mjs')} from ${sources.length} sources in ${Date.now() - started} ms\n`,
);
