import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, statSync, appendFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The largest log file before it is moved aside (one older file is kept). */
export const LOG_MAX_BYTES = 5 * 1024 * 1024;
/** How much of the log a feedback ticket gets: its end. */
export const LOG_ATTACH_BYTES = 256 * 1024;

/**
 * The client's log, in the user's app data: the shell's own lines and the embedded server's (pino
 * output, where secrets are already redacted). Feedback attaches its end; the log folder opens
 * from the user panel.
 */
export class LogFile {
  readonly dir: string;
  readonly file: string;

  constructor(dir: string, name = 'skyferry.log') {
    this.dir = dir;
    this.file = join(dir, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  write(source: string, line: string): void {
    try {
      if (existsSync(this.file) && statSync(this.file).size > LOG_MAX_BYTES) {
        renameSync(this.file, this.file.replace(/\.log$/, '.old.log'));
      }
      appendFileSync(this.file, `${new Date().toISOString()} [${source}] ${line.replace(/\r?\n$/, '')}\n`, {
        mode: 0o600,
      });
    } catch {
      // A log that cannot be written must not stop the app.
    }
  }

  /** The end of the log (at most LOG_ATTACH_BYTES, starting at a whole line). */
  tail(maxBytes = LOG_ATTACH_BYTES): { name: string; text: string } {
    const name = basename(this.file);
    if (!existsSync(this.file)) return { name, text: '' };
    const size = statSync(this.file).size;
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const fd = openSync(this.file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, start);
    } finally {
      closeSync(fd);
    }
    let text = buffer.toString('utf8');
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    return { name, text };
  }
}
