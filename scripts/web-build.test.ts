import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STAMP_FILE, webBuildIsCurrent, webSourceStamp } from './web-build.ts';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-web-'));
  roots.push(root);
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), body);
  }
  return root;
}

describe('npm start builds the web app only when its sources changed', () => {
  const files = {
    'apps/web/src/main.tsx': 'x',
    'apps/web/index.html': '<html>',
    'packages/contract/src/index.ts': 'y',
    'package-lock.json': '{}',
    'apps/web/dist/index.html': '<html>built',
  };

  it('a build stamped with the current sources is current; none, or a stale one, is not', () => {
    const root = tree(files);
    expect(webBuildIsCurrent(root)).toBe(false);
    writeFileSync(join(root, 'apps/web/dist', STAMP_FILE), webSourceStamp(root) + '\n');
    expect(webBuildIsCurrent(root)).toBe(true);
    // Edits to the build or installed packages are not source changes.
    writeFileSync(join(root, 'apps/web/dist/extra.js'), 'z');
    mkdirSync(join(root, 'apps/web/node_modules/p'), { recursive: true });
    writeFileSync(join(root, 'apps/web/node_modules/p/i.js'), 'z');
    expect(webBuildIsCurrent(root)).toBe(true);
  });

  for (const [what, change] of [
    [
      'an edited web source',
      (r: string) => utimesSync(join(r, 'apps/web/src/main.tsx'), new Date(), new Date(Date.now() + 5_000)),
    ],
    ['a new web source', (r: string) => writeFileSync(join(r, 'apps/web/src/new.tsx'), 'n')],
    ['an edited shared contract', (r: string) => writeFileSync(join(r, 'packages/contract/src/index.ts'), 'yy')],
    ['changed dependencies', (r: string) => writeFileSync(join(r, 'package-lock.json'), '{"a":1}')],
  ] as const) {
    it(`builds again after ${what}`, () => {
      const root = tree(files);
      writeFileSync(join(root, 'apps/web/dist', STAMP_FILE), webSourceStamp(root) + '\n');
      change(root);
      expect(webBuildIsCurrent(root)).toBe(false);
    });
  }

  it('a stamp without a build is not a build', () => {
    const root = tree({ ...files });
    writeFileSync(join(root, 'apps/web/dist', STAMP_FILE), webSourceStamp(root) + '\n');
    rmSync(join(root, 'apps/web/dist/index.html'));
    expect(webBuildIsCurrent(root)).toBe(false);
  });
});
