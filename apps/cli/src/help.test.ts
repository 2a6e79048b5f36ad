import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLOUD_KINDS, CONFLICT_RESOLUTIONS, FILTER_CATEGORIES, SAME_NAME_POLICIES } from '@skyferry/contract';
import { completionScript } from './completion.js';
import { COMMANDS, HELP_LISTS, OPTIONS, helpText } from './help.js';

/**
 * The bin run by Node with TypeScript turned off, from a copy of the package without a bundle
 * (a built apps/cli/dist would answer every command in plain JavaScript): only the bin's own
 * plain JavaScript may load.
 */
function bareBin(...args: string[]) {
  return spawnSync(process.execPath, ['--no-experimental-strip-types', join(bare, 'bin', 'skyferry.js'), ...args], {
    encoding: 'utf8',
  });
}
const bare = mkdtempSync(join(tmpdir(), 'skyferry-bare-'));
const CLI = join(import.meta.dirname, '..');
for (const file of ['package.json', 'bin/skyferry.js', 'src/help.js', 'src/completion.js', 'src/main.ts']) {
  mkdirSync(join(bare, file, '..'), { recursive: true });
  copyFileSync(join(CLI, file), join(bare, file));
}
afterAll(() => rmSync(bare, { recursive: true, force: true }));

describe('help and version answer without loading the engine', () => {
  it("the help's lists are the contract's", () => {
    expect(HELP_LISTS).toEqual({
      sameName: SAME_NAME_POLICIES,
      categories: FILTER_CATEGORIES,
      conflicts: CONFLICT_RESOLUTIONS,
      kinds: CLOUD_KINDS,
    });
  });

  it('--help, help, -h and --version load no TypeScript module (Node start-up alone)', () => {
    for (const flag of ['--help', 'help', '-h']) {
      const r = bareBin(flag);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(helpText());
    }
    expect(bareBin('--version').stdout).toMatch(/^skyferry \d+\.\d+\.\d+\n$/);
    // No command: the help, as a usage mistake.
    expect(bareBin().status).toBe(2);
    // Anything else loads the TypeScript engine (so the check above means something).
    const ls = bareBin('ls', '.');
    expect(ls.status).not.toBe(0);
    expect(ls.stderr).toMatch(/main\.ts/);
  });
});

/** What bash's completion offers for the words typed (the last one being completed). */
function bashComplete(...words: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'skyferry-completion-'));
  const script = join(dir, 'skyferry.bash');
  writeFileSync(script, completionScript('bash') as string);
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source ${script}; COMP_WORDS=(skyferry ${quoted}); COMP_CWORD=${words.length}; _skyferry; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { encoding: 'utf8', cwd: dir },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean).sort();
}

describe('shell completion', () => {
  it('bash completes commands, options, their choices and the remotes actions', () => {
    expect(bashComplete('co')).toEqual(['completion', 'copy']);
    expect(bashComplete('r')).toEqual(['remotes', 'rmdirs']);
    expect(bashComplete('copy', '--dry')).toEqual(['--dry-run']);
    expect(bashComplete('copy', '--same-name', 'size')).toEqual(['size_differs', 'size_differs_or_newer']);
    expect(bashComplete('dedupe', '--keep', '')).toEqual(['first', 'newest', 'oldest']);
    expect(bashComplete('remotes', 'i')).toEqual(['import-rclone']);
    expect(bashComplete('remotes', 'add', 'nas', 'sf')).toEqual(['sftp']);
    expect(bashComplete('completion', '')).toEqual(['bash', 'fish', 'zsh']);
    expect(bashComplete('copy', 'skyferry.b')).toEqual(['skyferry.bash']);
  });

  it('zsh and fish scripts name every command and option, with its help', () => {
    const zsh = completionScript('zsh') as string;
    const fish = completionScript('fish') as string;
    expect(zsh.startsWith('#compdef skyferry\n')).toBe(true);
    for (const [name, c] of Object.entries(COMMANDS)) {
      expect(zsh).toContain(`'${name}:${c.about.replace(/'/g, '')}'`);
      expect(fish).toContain(`-a ${name} -d '${c.about.replace(/'/g, '')}'`);
    }
    for (const name of Object.keys(OPTIONS)) {
      expect(zsh).toMatch(new RegExp(`'--${name}:[^']+'`));
      expect(fish).toMatch(new RegExp(`-l ${name}( |$)`, 'm'));
    }
    expect(fish).toContain("-l same-name -x -a 'overwrite skip size_differs size_differs_or_newer'");
    expect(completionScript('tcsh')).toBeUndefined();
  });
});
