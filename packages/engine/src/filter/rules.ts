import { FilterError, globToRegExp, parentGlobs } from './glob.ts';

/**
 * Ordered include/exclude rules as rclone documents them (https://rclone.org/filtering/): file
 * rules judge files, folder rules decide which folders are walked at all, the first rule that
 * matches decides, and what no rule matches is included.
 *
 * - A pattern ending in / is a folder rule; excluding "dir/" excludes "dir/**" (the folder and all
 *   in it); a pattern holding ** is a file rule and a folder rule.
 * - An include file rule lets the walk into the folders its matches can be in ("/a/b/*.jpg": "/a/b/"
 *   and "/a/"; any folder where the pattern has no folder part or holds a {{regexp}}).
 * - "- *" also leaves out every folder no earlier rule let in (as rclone 1.60 does).
 * - With any --include (or --include-from) rule, "- /**" ends the list.
 */

interface Rule {
  include: boolean;
  re: RegExp;
}

/** The rule lists a filter's patterns compile to, in rclone's order. */
export interface RuleSource {
  include?: readonly string[];
  exclude?: readonly string[];
  /** `--filter` lines: "+ pattern", "- pattern", or "!" (clears every rule before it). */
  rules?: readonly string[];
  ignoreCase?: boolean;
}

export class RuleSet {
  private files: Rule[] = [];
  private dirs: Rule[] = [];
  private readonly ignoreCase: boolean;

  constructor(ignoreCase = false) {
    this.ignoreCase = ignoreCase;
  }

  get empty(): boolean {
    return this.files.length === 0 && this.dirs.length === 0;
  }

  /** Adds one pattern as an include or exclude rule. */
  add(include: boolean, pattern: string, rule = pattern): void {
    if (pattern === '') throw new FilterError(rule, 'empty pattern');
    let glob = pattern;
    let dirRule = glob.endsWith('/');
    let fileRule = !dirRule;
    if (dirRule && !include) {
      glob += '**';
      fileRule = true;
    }
    if (glob.includes('**')) dirRule = fileRule = true;
    const compiled = globToRegExp(glob, this.ignoreCase, rule);
    if (fileRule) {
      this.files.push({ include, re: compiled.re });
      if (include) {
        const parents = parentGlobs(glob, compiled.regexp);
        if (parents === null) this.dirs.push({ include: true, re: /^.*$/su });
        else for (const p of parents) this.dirs.push({ include: true, re: globToRegExp(p, this.ignoreCase, rule).re });
      }
    }
    if (dirRule) this.dirs.push({ include, re: compiled.re });
    // "- *" leaves out every file, so no folder is walked that an earlier rule did not let in.
    if (!include && glob === '*') this.dirs.push({ include: false, re: /^.*$/su });
  }

  /** Adds a `--filter` line: "+ pattern", "- pattern" or "!". */
  addLine(line: string): void {
    if (line === '!') {
      this.files = [];
      this.dirs = [];
    } else if (line.startsWith('+ ')) this.add(true, line.slice(2), line);
    else if (line.startsWith('- ')) this.add(false, line.slice(2), line);
    else throw new FilterError(line, 'malformed rule (a rule starts with "+ " or "- ")');
  }

  /** Whether a file (root-relative path, no leading slash) passes. */
  file(path: string): boolean {
    for (const r of this.files) if (r.re.test(path)) return r.include;
    return true;
  }

  /** Whether a folder (root-relative path, no leading slash) is walked. */
  dir(path: string): boolean {
    const p = path.endsWith('/') ? path : `${path}/`;
    for (const r of this.dirs) if (r.re.test(p)) return r.include;
    return true;
  }

  /** The rules of a filter in rclone's order: includes, excludes, filter lines, then "- /**" after any include. */
  static of(src: RuleSource): RuleSet {
    const set = new RuleSet(src.ignoreCase === true);
    for (const p of src.include ?? []) set.add(true, p);
    for (const p of src.exclude ?? []) set.add(false, p);
    for (const l of src.rules ?? []) set.addLine(l);
    if ((src.include?.length ?? 0) > 0) set.add(false, '/**');
    return set;
  }
}
