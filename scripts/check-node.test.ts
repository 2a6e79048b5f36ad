import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, 'check-node.cjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the check as npm would, in a project whose package.json asks for `engines`. */
function check(engines: string, node = process.execPath) {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-node-'));
  dirs.push(root);
  mkdirSync(join(root, 'scripts'));
  copyFileSync(SCRIPT, join(root, 'scripts/check-node.cjs'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ engines: { node: engines } }));
  return spawnSync(node, ['scripts/check-node.cjs'], { cwd: root, encoding: 'utf8' });
}

describe('the Node version check before npm ci, npm start and npm test', () => {
  it('stops with one line naming the version needed and how to get it', () => {
    const r = check('>=99.1');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Node.js 99.1.0 or newer');
    expect(lines[0]).toContain(`this is ${process.versions.node}`);
    expect(lines[0]).toMatch(/nodejs\.org|nvm install/);
  });

  it('says nothing on a Node new enough', () => {
    const r = check('>=20');
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
  });

  it('runs on the old Node it turns away (the system Node, when there is an older one)', () => {
    const old = '/usr/bin/node';
    const version = existsSync(old) ? spawnSync(old, ['--version'], { encoding: 'utf8' }).stdout.trim() : '';
    const major = Number(version.replace(/^v/, '').split('.')[0] || 0);
    const r = check(major > 0 ? `>=${major + 1}.0` : '>=99', major > 0 ? old : process.execPath);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^Skyferry needs Node\.js \d+\.0\.0 or newer/);
  });
});
