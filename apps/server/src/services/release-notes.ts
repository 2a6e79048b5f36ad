import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One version's section of CHANGELOG.md. */
export interface ReleaseNote {
  version: string;
  /** The date on its heading (`## 0.2.0 - 2026-12-01`), when given. */
  date: string | null;
  /** The section's Markdown, without its heading. */
  content: string;
}

const HEADING = /^##\s+\[?v?(\d+\.\d+\.\d+[\w.+-]*)\]?(?:\s+[-–—]\s+(\S.*))?\s*$/;

/** Splits a CHANGELOG in the Keep a Changelog shape into its versions, newest (first in the file) first. */
export function parseChangelog(text: string): ReleaseNote[] {
  const notes: ReleaseNote[] = [];
  let current: { version: string; date: string | null; lines: string[] } | undefined;
  const flush = () => {
    if (current) notes.push({ version: current.version, date: current.date, content: current.lines.join('\n').trim() });
  };
  for (const line of text.split(/\r?\n/)) {
    const m = HEADING.exec(line);
    if (m?.[1]) {
      flush();
      current = { version: m[1], date: m[2]?.trim() ?? null, lines: [] };
    } else if (/^##\s/.test(line)) {
      // "## Unreleased" and other sections that name no version end the one before.
      flush();
      current = undefined;
    } else current?.lines.push(line);
  }
  flush();
  return notes;
}

const REPO_ROOT = join(import.meta.dirname, '../../../..');

/** The server package's version; an installed app may ship the server without its package.json. */
function packageVersion(): string {
  for (const file of [join(import.meta.dirname, '../../package.json'), join(REPO_ROOT, 'apps/server/package.json')]) {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    } catch {
      // not there in this layout: the next place, or unknown
    }
  }
  return '0.0.0';
}

/**
 * The server's version (the server package's) and the release notes of CHANGELOG.md at the
 * repository's root, read once.
 */
export class ReleaseNotes {
  readonly version: string;
  private readonly notes: ReleaseNote[];

  constructor(options: { changelog?: string; version?: string } = {}) {
    this.version = options.version ?? packageVersion();
    let text = options.changelog;
    if (text === undefined) {
      try {
        text = readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8');
      } catch {
        text = '';
      }
    }
    this.notes = parseChangelog(text);
  }

  /** A version's notes ("latest" or "current": the server's own version). */
  find(version: string): ReleaseNote | undefined {
    const wanted = version === 'latest' || version === 'current' ? this.version : version.replace(/^v/, '');
    return this.notes.find((n) => n.version === wanted);
  }
}
