import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `npm run build:cli` and the bin's choice: the bundle while its sources are unchanged, else the
// TypeScript. Built into a folder of its own (a bin beside a dist/), not the real apps/cli/dist.

const CLI = join(import.meta.dirname, '..');
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(CLI, '.bundle-test-'));
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(CLI, 'bin', 'skyferry.js'), join(root, 'bin', 'skyferry.js'));
  const built = spawnSync(process.execPath, [join(CLI, 'build.ts'), join(root, 'dist')], { encoding: 'utf8' });
  expect(built.status, built.stderr).toBe(0);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The copied bin with TypeScript turned off: only the bundle can run a command. */
const ls = () =>
  spawnSync(process.execPath, ['--no-experimental-strip-types', join(root, 'bin', 'skyferry.js'), 'ls', CLI], {
    encoding: 'utf8',
    env: { ...process.env, SKYFERRY_STATE_DIR: join(root, 'state'), SKYFERRY_CONFIG: join(root, 'remotes.json') },
  });

describe('the bundled command line', () => {
  it('runs a command without loading TypeScript while its sources are unchanged', () => {
    const r = ls();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ package\.json\n/);
  });

  it('loads no npm package a local command does not use (SSH, FTP, XML, database, logging)', () => {
    // A resolve hook that writes every bare specifier Node resolves to stderr.
    const hook = join(root, 'trace.mjs');
    writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) {
  if (!/^[./]|^node:|^file:/.test(specifier)) process.stderr.write('resolved ' + specifier + '\\n');
  return next(specifier, context);
} });`,
    );
    const src = join(root, 'local-src');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'note.txt'), 'a small file\n');
    const r = spawnSync(
      process.execPath,
      ['--import', hook, join(root, 'bin', 'skyferry.js'), 'copy', join(src, 'note.txt'), join(root, 'local-dst')],
      {
        encoding: 'utf8',
        env: { ...process.env, SKYFERRY_STATE_DIR: join(root, 'state'), SKYFERRY_CONFIG: join(root, 'remotes.json') },
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(root, 'local-dst', 'note.txt'), 'utf8')).toBe('a small file\n');
    const loaded = [...r.stderr.matchAll(/^resolved (\S+)$/gm)].map((m) => m[1]);
    for (const heavy of ['ssh2', 'basic-ftp', 'fast-xml-parser', 'pg', 'kysely', 'pino', 'better-sqlite3']) {
      expect(loaded).not.toContain(heavy);
    }
  });

  it('is left for the TypeScript sources once one of them changed', () => {
    const list = join(root, 'dist', 'sources.json');
    const sources = JSON.parse(readFileSync(list, 'utf8')) as Array<[string, number, number]>;
    expect(sources.map(([p]) => p)).toContain(join(CLI, 'src', 'cli.ts'));
    const [first, ...rest] = sources as [[string, number, number], ...Array<[string, number, number]>];
    writeFileSync(list, JSON.stringify([[first[0], first[1] - 1000, first[2]], ...rest]));
    const r = ls();
    // This copied bin has no sources beside it: the TypeScript entry it falls back to is missing.
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/src\/main\.ts/);
  });
});
