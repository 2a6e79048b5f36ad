/**
 * rclone's pattern syntax (https://rclone.org/filtering/#patterns) turned into regular
 * expressions matched against a path relative to the transfer's root, without a leading slash
 * ("dir/file.jpg"; a directory as "dir/sub/").
 *
 *   *  any run of characters but /      **  any run of characters, / too     ?  one character but /
 *   [...] a character class ([!...] or [^...] negated, [:alpha:] and the other ASCII classes)
 *   {a,b} alternatives, each a pattern   {{re}} a regular expression   \c  the character c
 *   (\d \D \s \S \w \W: those classes)
 *
 * A pattern starting with / matches from the root; any other matches whole path elements at the
 * end of the path.
 */

/** A pattern or rule that cannot be compiled, with the rule as written. */
export class FilterError extends Error {
  readonly rule: string;
  constructor(rule: string, reason: string) {
    super(`${reason}: ${JSON.stringify(rule)}`);
    this.name = 'FilterError';
    this.rule = rule;
  }
}

const SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));
const PERL_CLASSES = new Set('dDsSwW'.split(''));

/** A character as itself in a regular expression (unicode mode). */
function literal(c: string): string {
  return SYNTAX.has(c) ? `\\${c}` : c;
}

/** A character inside a class as itself. */
function classLiteral(c: string): string {
  return c === '\\' || c === ']' || c === '[' || c === '^' || c === '-' ? `\\${c}` : c;
}

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`\\{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Go's inline flags at the start of a regular expression ("(?i)x") as a JS modifier group. */
function goRegexp(re: string): string {
  const m = /^\(\?([imsU]+)\)/.exec(re);
  if (!m) return re;
  const flags = (m[1] as string).replace(/U/g, '');
  return flags ? `(?${flags}:${re.slice(m[0].length)})` : re.slice(m[0].length);
}

interface Translated {
  source: string;
  /** The pattern holds a {{regexp}} (no directory rule can be implied from it). */
  regexp: boolean;
}

/** Translates a pattern (without its anchoring slash) into a regular expression's source. */
function translate(rule: string, glob: string, inBraces: boolean): Translated {
  let out = '';
  let regexp = false;
  let i = 0;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === '\\') {
      const n = glob[i + 1];
      if (n === undefined) {
        out += '\\\\';
        i++;
      } else {
        out += PERL_CLASSES.has(n) ? `\\${n}` : literal(n);
        i += 2;
      }
    } else if (c === '*') {
      if (glob[i + 1] === '*') {
        out += '.*';
        i += 2;
      } else {
        out += '[^/]*';
        i++;
      }
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '[') {
      const [cls, next] = characterClass(rule, glob, i);
      out += cls;
      i = next;
    } else if (c === '{' && glob[i + 1] === '{') {
      const end = glob.indexOf('}}', i + 2);
      if (end < 0) throw new FilterError(rule, "mismatched '{{' and '}}'");
      out += `(${goRegexp(glob.slice(i + 2, end))})`;
      regexp = true;
      i = end + 2;
    } else if (c === '{') {
      if (inBraces) throw new FilterError(rule, "can't nest '{' '}'");
      const [alts, next] = alternatives(rule, glob, i);
      const parts = alts.map((a) => translate(rule, a, true));
      if (parts.some((p) => p.regexp)) regexp = true;
      out += `(${parts.map((p) => p.source).join('|')})`;
      i = next;
    } else if (c === '}' || c === ']') {
      throw new FilterError(rule, `mismatched '${c}'`);
    } else {
      out += literal(c);
      i++;
    }
  }
  return { source: out, regexp };
}

/** A [...] class starting at `start`: its regular expression and the index after it. */
function characterClass(rule: string, glob: string, start: number): [string, number] {
  let i = start + 1;
  let out = '[';
  if (glob[i] === '!' || glob[i] === '^') {
    out += '^';
    i++;
  }
  let members = 0;
  for (;;) {
    const c = glob[i];
    if (c === undefined) throw new FilterError(rule, "mismatched '[' and ']'");
    if (c === ']') {
      if (members === 0) throw new FilterError(rule, 'empty character class');
      return [`${out}]`, i + 1];
    }
    if (c === '[' && glob[i + 1] === ':') {
      const end = glob.indexOf(':]', i + 2);
      const cls = end < 0 ? undefined : POSIX[glob.slice(i + 2, end)];
      if (cls === undefined) throw new FilterError(rule, 'unknown character class');
      out += cls;
      i = end + 2;
    } else if (c === '\\') {
      const n = glob[i + 1];
      if (n === undefined) throw new FilterError(rule, "mismatched '[' and ']'");
      out += PERL_CLASSES.has(n) ? `\\${n}` : classLiteral(n);
      i += 2;
    } else if (c === '-' && members > 0 && glob[i + 1] !== ']') {
      out += '-';
      i++;
      continue;
    } else if (c === '/') {
      throw new FilterError(rule, "mismatched '[' and ']'");
    } else {
      out += classLiteral(c);
      i++;
    }
    members++;
  }
}

/** The comma-separated patterns of a {a,b} group starting at `start`, and the index after it. */
function alternatives(rule: string, glob: string, start: number): [string[], number] {
  const alts: string[] = [];
  let cur = '';
  let i = start + 1;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) {
      cur += c + (glob[i + 1] as string);
      i += 2;
    } else if (c === '[') {
      const end = characterClass(rule, glob, i)[1];
      cur += glob.slice(i, end);
      i = end;
    } else if (c === '{' && glob[i + 1] === '{') {
      const end = glob.indexOf('}}', i + 2);
      if (end < 0) throw new FilterError(rule, "mismatched '{{' and '}}'");
      cur += glob.slice(i, end + 2);
      i = end + 2;
    } else if (c === '{') {
      throw new FilterError(rule, "can't nest '{' '}'");
    } else if (c === ',') {
      alts.push(cur);
      cur = '';
      i++;
    } else if (c === '}') {
      alts.push(cur);
      return [alts, i + 1];
    } else {
      cur += c;
      i++;
    }
  }
  throw new FilterError(rule, "mismatched '{' and '}'");
}

export interface CompiledGlob {
  re: RegExp;
  regexp: boolean;
}

/** A pattern as a regular expression over root-relative paths ("a/b.txt", folders as "a/b/"). */
export function globToRegExp(glob: string, ignoreCase = false, rule = glob): CompiledGlob {
  const anchored = glob.startsWith('/');
  const t = translate(rule, anchored ? glob.slice(1) : glob, false);
  const source = `${anchored ? '^' : '(^|/)'}${t.source}$`;
  try {
    return { re: new RegExp(source, ignoreCase ? 'iu' : 'u'), regexp: t.regexp };
  } catch (e) {
    throw new FilterError(rule, `invalid regular expression (${(e as Error).message})`);
  }
}

/**
 * The parent folders a file pattern can match in, as folder patterns ("a/b/*.jpg": "a/b/", "a/"),
 * longest first; null when any folder can hold a match (no folder part, or a {{regexp}}).
 * An anchored pattern without a folder part answers [] (only the root holds its matches).
 */
export function parentGlobs(glob: string, hasRegexp: boolean): string[] | null {
  if (hasRegexp) return null;
  const anchored = glob.startsWith('/');
  const body = anchored ? glob.slice(1) : glob;
  // Slashes outside [...] and {...}: a slash inside {a/x,b} leaves the folder part unknown.
  const cuts: number[] = [];
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const end = body.indexOf(']', i + 2);
      i = end < 0 ? body.length : end;
    } else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === '/' && depth === 0) cuts.push(i);
  }
  if (cuts.length === 0) return anchored ? [] : null;
  return cuts.reverse().map((cut) => `${anchored ? '/' : ''}${body.slice(0, cut + 1)}`);
}
