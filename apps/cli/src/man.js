/**
 * The manual page skyferry(1), made from the help text (help.js) so the two never differ: the
 * commands, options and filter rules as sections, each in the help's own words. `npm run
 * build:cli` writes it to dist/skyferry.1 (the package's "man" entry). Plain JavaScript, as help.js.
 */
import { COMMANDS, helpText } from './help.js';

/** Text safe in roff: backslashes doubled, a line starting with . or ' escaped. */
function roff(text) {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .split('\n')
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join('\n');
}

/** The help text's headings, in its order; a line starting with one starts its section. */
const HEADINGS = ['Commands', 'Paths', 'Options', 'Filters', 'Remotes file', 'Exit codes'];

/** The help text's sections: the usage line's block, then each heading's block (its first line kept whole). */
function sections(text) {
  const out = [];
  let current = { title: 'USAGE', lines: [] };
  for (const line of text.split('\n')) {
    const heading = HEADINGS.find((h) => line.startsWith(`${h}:`) || line.startsWith(`${h} (`));
    if (heading) {
      out.push(current);
      const rest = line.slice(heading.length).replace(/^:\s*/, '').trim();
      current = { title: heading.toUpperCase(), lines: rest ? [rest] : [] };
    } else current.lines.push(line);
  }
  out.push(current);
  return out.filter((s) => s.lines.some((l) => l.trim() !== ''));
}

/** skyferry(1) in roff (man 7 man), dated `date` (YYYY-MM-DD). */
export function manPage(version, date) {
  const text = helpText();
  const usage = text.split('\n')[0].replace(/^Usage:\s*/, '');
  const parts = [
    `.TH SKYFERRY 1 "${date}" "skyferry ${version}" "User Commands"`,
    '.SH NAME',
    'skyferry \\- copy, sync and compare folders between clouds and this machine',
    '.SH SYNOPSIS',
    `.B ${roff(usage)}`,
    '.SH COMMANDS',
  ];
  for (const [name, c] of Object.entries(COMMANDS)) {
    parts.push('.TP', `.B ${roff(`${name} ${c.args}`.trim())}`, roff(c.about));
  }
  for (const s of sections(text)) {
    if (s.title === 'USAGE' || s.title === 'COMMANDS') continue;
    // The help's own layout (aligned columns) is kept as it is.
    parts.push(`.SH ${roff(s.title)}`, '.nf', roff(s.lines.join('\n').replace(/\n+$/, '')), '.fi');
  }
  parts.push('.SH SEE ALSO', 'rclone(1)');
  return `${parts.join('\n')}\n`;
}
