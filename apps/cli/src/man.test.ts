import { describe, expect, it } from 'vitest';
import { COMMANDS, OPTIONS, helpText } from './help.js';
import { manPage } from './man.js';

// skyferry(1) is made from the help text: every command and option the help names is in it, in
// roff that man(1) reads as text (no stray request lines, every hyphen a real minus).

const page = manPage('1.2.3', '2026-11-28');
const lines = page.split('\n');
const MACROS = new Set(['.TH', '.SH', '.TP', '.B', '.nf', '.fi']);

describe('the manual page', () => {
  it('has the title, name and synopsis a man page needs', () => {
    expect(lines[0]).toBe('.TH SKYFERRY 1 "2026-11-28" "skyferry 1.2.3" "User Commands"');
    expect(page).toContain('.SH NAME\nskyferry \\- ');
    expect(page).toContain('.SH SYNOPSIS\n.B skyferry <command> [options] <paths>');
  });

  it('names every command with its help line, and every option of the help', () => {
    for (const [name, c] of Object.entries(COMMANDS)) {
      expect(page).toContain(`.B ${`${name} ${c.args}`.trim().replace(/-/g, '\\-')}\n${c.about.replace(/-/g, '\\-')}`);
    }
    for (const name of Object.keys(OPTIONS)) expect(page, name).toContain(`\\-\\-${name.replace(/-/g, '\\-')}`);
    for (const title of ['PATHS', 'OPTIONS', 'FILTERS', 'REMOTES FILE', 'EXIT CODES']) {
      expect(page).toContain(`.SH ${title}\n`);
    }
  });

  it('keeps the help text whole and starts no line with a dot or quote that is not a macro', () => {
    for (const l of lines) {
      if (l.startsWith('.') || l.startsWith("'")) expect(MACROS.has(l.split(' ')[0] as string), l).toBe(true);
      if (!l.startsWith('.TH')) expect(l).not.toMatch(/(^|[^\\])-/);
    }
    // Every word of the help is in the page (roff escapes taken out), its headings made section titles.
    const text = page.replace(/\\-/g, '-').replace(/\\e/g, '\\').replace(/\\&/g, '');
    const help = helpText().replace(/^(Usage|Commands|Paths|Options|Filters|Remotes file|Exit codes):?/gm, '');
    for (const word of new Set(help.split(/\s+/).filter(Boolean))) expect(text, word).toContain(word);
  });
});
