import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Stages what electron-builder packs besides the shell (see electron-builder.yml):
 *
 * - stage/server: the embedded server as plain JavaScript. Node runs TypeScript by stripping types
 *   but never under node_modules, and an installed app keeps its packages there, so each workspace
 *   package the server uses is compiled (types stripped, `.ts` imports renamed `.js`) into
 *   stage/server/node_modules/@skyferry/<name>; the server starts at
 *   node_modules/@skyferry/server/src/main.js.
 * - With --install (a machine with the registry and the Electron binary): the server's
 *   dependencies are installed there at the versions this repository locks, and the native ones
 *   rebuilt for Electron's Node (the app runs the server with Electron's binary as Node).
 *
 * Without --install the staged server resolves its dependencies from the repository's
 * node_modules (the folder sits inside it), which is how the tests run it.
 */
const repo = resolve(import.meta.dirname, '..', '..', '..');
const WORKSPACES: Record<string, string> = {
  server: 'apps/server',
  contract: 'packages/contract',
  db: 'packages/db',
  providers: 'packages/providers',
  engine: 'packages/engine',
  queue: 'packages/queue',
};
/** Test-only code the server never loads. */
const SKIP = /(\.test\.ts$|\.bench\.ts$|\/testkit\/|\/testing\/|\/testing\.ts$|\/live\/)/;
const IMPORT_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+?)\.ts\2/g;
// Only what npm allows in a package's name (lower case, no spaces), ended by a quote or a subpath:
// a comment saying `from "All Files"` is no import.
const BARE_IMPORT =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]((?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)(?=['"/])/g;

/** Strips a TypeScript module's types and points its relative `.ts` imports at `.js`. */
export function compileModule(source: string): string {
  return stripTypeScriptTypes(source, { mode: 'strip' }).replace(IMPORT_SPECIFIER, '$1$2$3.js$2');
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Compiles one workspace package into `out`; answers the bare packages its code imports. */
function compileWorkspace(name: string, out: string): Set<string> {
  const root = join(repo, WORKSPACES[name]!);
  const imported = new Set<string>();
  for (const file of walk(join(root, 'src'))) {
    const rel = relative(root, file);
    if (SKIP.test(`/${rel}`)) continue;
    const target = join(out, rel);
    mkdirSync(dirname(target), { recursive: true });
    if (!file.endsWith('.ts')) {
      copyFileSync(file, target);
      continue;
    }
    const code = compileModule(readFileSync(file, 'utf8'));
    for (const m of code.matchAll(BARE_IMPORT)) imported.add(m[1]!);
    writeFileSync(target.replace(/\.ts$/, '.js'), code);
  }
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const exports = Object.fromEntries(
    Object.entries((pkg.exports ?? {}) as Record<string, string>)
      .filter(([, path]) => !SKIP.test(path.replace(/^\./, '')))
      .map(([key, path]) => [key, path.replace(/\.ts$/, '.js')]),
  );
  writeFileSync(
    join(out, 'package.json'),
    JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module', exports }, null, 2),
  );
  return imported;
}

/** The version of a dependency this repository has installed. */
function installedVersion(name: string): string {
  const file = join(repo, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export function stageServer(out: string, options: { install: boolean; electronVersion?: string }): void {
  rmSync(out, { recursive: true, force: true });
  const modules = join(out, 'node_modules', '@skyferry');
  const imported = new Set<string>();
  for (const name of Object.keys(WORKSPACES)) {
    for (const dep of compileWorkspace(name, join(modules, name))) imported.add(dep);
  }
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  const external = [...imported].filter(
    (d) => !d.startsWith('@skyferry/') && !builtins.has(d) && !d.startsWith('node:'),
  );
  const dependencies = Object.fromEntries(external.sort().map((d) => [d, installedVersion(d)]));
  writeFileSync(
    join(out, 'package.json'),
    JSON.stringify({ name: 'skyferry-embedded-server', private: true, type: 'module', dependencies }, null, 2),
  );
  if (!options.install) return;
  // The compiled packages are put aside while npm installs the rest (it removes what it did not install).
  const aside = `${out}-skyferry`;
  rmSync(aside, { recursive: true, force: true });
  cpSync(modules, aside, { recursive: true });
  execFileSync('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: out,
    stdio: 'inherit',
  });
  cpSync(aside, modules, { recursive: true });
  rmSync(aside, { recursive: true, force: true });
  // Native modules for Electron's Node (better-sqlite3 and the like), from their sources or prebuilds.
  execFileSync(
    join(repo, 'node_modules', '.bin', 'electron-rebuild'),
    ['--version', options.electronVersion ?? electronVersion(), '--module-dir', out],
    { cwd: out, stdio: 'inherit' },
  );
}

function electronVersion(): string {
  return installedVersion('electron');
}

if (import.meta.main) {
  const install = process.argv.includes('--install');
  const desktop = resolve(import.meta.dirname, '..');
  stageServer(join(desktop, 'stage', 'server'), { install });
  if (!existsSync(join(repo, 'apps', 'web', 'dist', 'index.html'))) {
    console.error('apps/web/dist is missing: run `npm run build -w @skyferry/web` first');
    process.exit(1);
  }
  console.error(`staged the server in ${join(desktop, 'stage', 'server')}${install ? '' : ' (no install)'}`);
}
