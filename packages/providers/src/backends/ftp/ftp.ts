import { posix } from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
import { FTPError, type Client, type FileInfo } from 'basic-ftp';
import { ProviderError, canceled } from '../../api/errors.ts';
import { pacerFor } from '../../pacer.ts';
import type { ProviderContext } from '../../api/registry.ts';
import type {
  Entry,
  EntryLink,
  Features,
  HashType,
  ListOptions,
  Page,
  Provider,
  ReadOptions,
  SrcInfo,
  WriteOptions,
} from '../../api/types.ts';
import { baseName, checkName, cleanPath, isWithin, joinPath, parentPath, pathSegments } from '../../path.ts';
import { keepErrorListener } from '../../net/listeners.ts';
import { fileReadRing, relayErrors } from '../../recycle.ts';
import {
  STALE_TEMP_MS,
  TEMP_NAME,
  TEMP_PREFIX,
  activeTemps,
  hasTempSegment,
  isTaggedTemp,
  isTempName,
  markSwept,
  sweepDue,
  tempName,
} from '../../temp-files.ts';
import { FtpPool, connectFtp, ftpError, type FtpLogin } from './pool.ts';
import { readNextDataInto } from './ring-data.ts';

/** Prefix and exact name of in-progress uploads (temp-files.ts); hidden from listings, never returned by stat. */
export const FTP_TEMP_PREFIX = TEMP_PREFIX;
export const FTP_TEMP_NAME = TEMP_NAME;
/** Age from which a temporary file a cut-off upload left is removed (temp-files.ts); read with MDTM (exact, UTC), never from a LIST line. */
export const FTP_STALE_TEMP_MS = STALE_TEMP_MS;

export interface FtpOptions {
  /** Most FTP connections kept open (default 4). */
  maxConnections?: number;
  /** Page size `list` uses when the caller gives none. */
  pageSize?: number;
  /** Age from which a leftover temporary file is removed (default FTP_STALE_TEMP_MS). */
  staleTempMs?: number;
  /** A connection silent this long (the server's, not a paused reader's) fails (default 30 s). */
  timeoutMs?: number;
}

const DEFAULT_PAGE_SIZE = 1000;
const SNAPSHOT_TTL_MS = 120_000;
const MAX_SNAPSHOTS = 16;

function hidden(path: string): boolean {
  return hasTempSegment(path);
}

/** FTP cannot carry CR or LF in a command, so such names cannot be stored. */
function checkFtpName(name: string): string {
  checkName(name);
  if (/[\r\n]/.test(name))
    throw new ProviderError('invalid_name', `FTP cannot store this name: ${JSON.stringify(name)}`);
  if (isTempName(name)) throw new ProviderError('invalid_name', `reserved name: ${name}`);
  return name;
}

/** "YYYYMMDDHHMMSS" in UTC, as MFMT and MDTM use. */
export function ftpTime(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    p(d.getUTCFullYear(), 4) +
    p(d.getUTCMonth() + 1) +
    p(d.getUTCDate()) +
    p(d.getUTCHours()) +
    p(d.getUTCMinutes()) +
    p(d.getUTCSeconds())
  );
}

/** Parses MLST/MLSD facts "type=file;size=3;modify=20210304050607; name". */
export function parseFacts(line: string): { facts: Map<string, string>; name: string } | undefined {
  const sp = line.indexOf(' ');
  if (sp < 0) return undefined;
  const facts = new Map<string, string>();
  for (const f of line.slice(0, sp).split(';')) {
    const eq = f.indexOf('=');
    if (eq > 0) facts.set(f.slice(0, eq).toLowerCase(), f.slice(eq + 1));
  }
  return { facts, name: line.slice(sp + 1) };
}

export function parseMlsdTime(v: string | undefined): Date | undefined {
  const m = v?.match(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.(\d+))?$/);
  if (!m) return undefined;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms));
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * Reads a Unix LIST date ("Mar 04 05:06" within the last half year, "Mar 04  2020" before), taken
 * as UTC (servers such as vsftpd list in UTC by default). DOS-style dates ("03-04-20 05:06AM") too.
 */
export function parseListTime(raw: string | undefined, now = new Date()): Date | undefined {
  if (!raw) return undefined;
  const unix = raw.trim().match(/^([A-Za-z]{3})\s+(\d{1,2})\s+(?:(\d{1,2}):(\d{2})|(\d{4}))$/);
  if (unix) {
    const month = MONTHS.indexOf(unix[1]!.toLowerCase());
    if (month < 0) return undefined;
    const day = Number(unix[2]);
    if (unix[5]) return new Date(Date.UTC(Number(unix[5]), month, day));
    const hh = Number(unix[3]);
    const mm = Number(unix[4]);
    let year = now.getUTCFullYear();
    // A year-less date later than tomorrow belongs to last year.
    if (Date.UTC(year, month, day, hh, mm) > now.getTime() + 86_400_000) year -= 1;
    return new Date(Date.UTC(year, month, day, hh, mm));
  }
  const dos = raw.trim().match(/^(\d{2})-(\d{2})-(\d{2,4})\s+(\d{1,2}):(\d{2})\s*(AM|PM)?$/i);
  if (dos) {
    let year = Number(dos[3]);
    if (year < 100) year += year < 70 ? 2000 : 1900;
    const ampm = dos[6]?.toUpperCase();
    const hh = ampm ? (Number(dos[4]) % 12) + (ampm === 'PM' ? 12 : 0) : Number(dos[4]);
    return new Date(Date.UTC(year, Number(dos[1]) - 1, Number(dos[2]), hh, Number(dos[5])));
  }
  return undefined;
}

function isFtpCode(err: unknown, ...codes: number[]): boolean {
  return err instanceof FTPError && codes.includes(err.code);
}

/**
 * FTP and FTPS (explicit AUTH TLS) over basic-ftp: a pool of logged-in clients (each does one
 * thing at a time), MLSD listings where the server has them (LIST otherwise), streamed transfers
 * with REST for ranged reads, uploads to a hidden temporary name renamed into place (a cancelled
 * upload leaves nothing visible), and modification times by MFMT (or vsftpd's MDTM with a time).
 */
export class FtpProvider implements Provider {
  readonly kind = 'ftp';
  readonly accountKey: string;
  readonly features: Features;
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>();
  readonly root: string;
  /** Server capabilities from FEAT. */
  readonly serverFeatures: ReadonlyMap<string, string>;
  private readonly pool: FtpPool;
  private readonly mlst: boolean;
  private readonly mfmt: boolean;
  private readonly mdtmWrite: boolean;
  private readonly pageSize: number;
  private readonly staleTempMs: number;
  private readonly secure: boolean;
  private readonly knownDirs = new Set<string>(['/']);
  private readonly dirsInFlight = new Map<string, Promise<void>>();
  private readonly snapshots = new Map<string, { at: number; entries: Entry[] }>();

  constructor(
    pool: FtpPool,
    root: string,
    accountKey: string,
    serverFeatures: Map<string, string>,
    welcome: string,
    secure: boolean,
    opts: FtpOptions = {},
  ) {
    this.pool = pool;
    this.root = root === '/' ? '' : root.replace(/\/+$/, '');
    this.accountKey = accountKey;
    this.serverFeatures = serverFeatures;
    this.mlst = serverFeatures.has('MLST');
    this.mfmt = serverFeatures.has('MFMT');
    // vsftpd sets times with "MDTM <time> <file>" (its mdtm_write option) and announces nothing.
    this.mdtmWrite = !this.mfmt && /vsftpd/i.test(welcome);
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    this.staleTempMs = opts.staleTempMs ?? FTP_STALE_TEMP_MS;
    this.secure = secure;
    this.features = {
      copy: false,
      move: true,
      trash: false,
      about: false,
      chunkWriter: false,
      listRecursive: false,
      setModTime: this.mfmt || this.mdtmWrite,
      caseInsensitive: false,
      bucketBased: false,
      needsSize: false,
      // The server's disk: 255 bytes on most.
      nameLimit: { max: 255, unit: 'bytes' },
    };
  }

  private remote(path: string): string {
    const p = cleanPath(path);
    return p === '/' ? this.root || '/' : this.root + p;
  }

  private dirEntry(p: string, modTime?: Date): Entry {
    const e: Entry = { path: p, name: baseName(p), kind: 'dir', size: 0 };
    if (modTime) e.modTime = modTime;
    return e;
  }

  /** Whether `p` is a folder (CWD works), without changing what later absolute-path commands do. */
  private async isDir(c: Client, p: string): Promise<boolean> {
    try {
      await c.cd(this.remote(p));
      return true;
    } catch (err) {
      if (err instanceof FTPError) return false;
      throw err;
    }
  }

  private async statWith(c: Client, p: string): Promise<Entry> {
    if (p === '/') return this.dirEntry('/');
    if (this.mlst) {
      try {
        const res = await c.send(`MLST ${this.remote(p)}`);
        const line = res.message
          .split(/\r?\n/)
          .map((l) => l.replace(/^\s+/, ''))
          .find((l) => /^[a-z.]+=.*;/i.test(l) && l.includes(' '));
        const parsed = line ? parseFacts(line) : undefined;
        if (parsed) {
          const type = parsed.facts.get('type')?.toLowerCase() ?? '';
          const modTime = parseMlsdTime(parsed.facts.get('modify'));
          if (type === 'dir' || type === 'cdir' || type === 'pdir') return this.dirEntry(p, modTime);
          const e: Entry = { path: p, name: baseName(p), kind: 'file', size: Number(parsed.facts.get('size') ?? 0) };
          if (modTime) e.modTime = modTime;
          return e;
        }
      } catch (err) {
        if (isFtpCode(err, 550, 450, 553)) throw new ProviderError('not_found', `not found: ${p}`, { cause: err });
        if (!isFtpCode(err, 500, 501, 502, 504)) throw err;
      }
    }
    // No MLST: a folder is what CWD enters; a file is what SIZE measures.
    if (await this.isDir(c, p)) return this.dirEntry(p);
    let size: number | undefined;
    try {
      const res = await c.send(`SIZE ${this.remote(p)}`);
      const m = res.message.match(/^213 (\d+)\s*$/);
      if (m) size = Number(m[1]);
    } catch (err) {
      if (isFtpCode(err, 550, 450, 553)) throw new ProviderError('not_found', `not found: ${p}`, { cause: err });
      if (!isFtpCode(err, 500, 501, 502, 504)) throw err;
    }
    if (size === undefined) {
      // No usable SIZE answer (ftp-srv answers "213 File status" for an empty file): list the folder.
      const found = (await this.listWith(c, parentPath(p))).find((x) => x.name === baseName(p));
      if (!found) throw new ProviderError('not_found', `not found: ${p}`);
      return found;
    }
    const e: Entry = { path: p, name: baseName(p), kind: 'file', size };
    const modTime = await c.lastMod(this.remote(p)).catch(() => undefined);
    if (modTime && !Number.isNaN(modTime.getTime())) e.modTime = modTime;
    return e;
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    if (opts.signal?.aborted) throw canceled();
    const e = await this.pool
      .use((c) => this.statWith(c, p))
      .catch((err: unknown) => {
        throw ftpError(err, p);
      });
    if (e.kind === 'dir') this.knownDirs.add(p);
    return e;
  }

  /**
   * Removes the temporary files a cut-off upload left in folder `d`, given the names of the files
   * there named exactly as this backend names them: each untouched (MDTM) for `staleTempMs` and not
   * an upload of this process. Never fails: a file it cannot remove stays hidden.
   */
  private async removeStaleTemps(c: Client, d: string, names: readonly string[]): Promise<void> {
    markSwept(`${this.accountKey}|${d}`);
    for (const name of names) {
      const remote = this.remote(joinPath(d, name));
      if (activeTemps.has(`${this.accountKey}|${remote}`)) continue;
      const modTime = await c.lastMod(remote).catch(() => undefined);
      if (!modTime || Number.isNaN(modTime.getTime()) || Date.now() - modTime.getTime() < this.staleTempMs) continue;
      await c.remove(remote).catch(() => undefined);
    }
  }

  /** Before a write: looks for stale temporary files in the folder, at most once every ten minutes. */
  private async sweepBeforeWrite(c: Client, d: string): Promise<void> {
    if (!sweepDue(`${this.accountKey}|${d}`)) return;
    try {
      await c.cd(this.remote(d));
      const infos = await c.list();
      await this.removeStaleTemps(
        c,
        d,
        infos.filter((f) => f.isFile && FTP_TEMP_NAME.test(f.name)).map((f) => f.name),
      );
    } catch {
      // The write goes on; the next listing tries again.
    }
  }

  private async listWith(c: Client, d: string): Promise<Entry[]> {
    try {
      await c.cd(this.remote(d));
    } catch (err) {
      if (!(err instanceof FTPError)) throw err;
      const st = await this.statWith(c, d);
      if (st.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${d}`);
      throw err;
    }
    const infos: FileInfo[] = await c.list();
    const temps = infos.filter((f) => f.isFile && FTP_TEMP_NAME.test(f.name)).map((f) => f.name);
    if (temps.length > 0) await this.removeStaleTemps(c, d, temps);
    const entries: Entry[] = [];
    for (const f of infos) {
      if (f.name === '.' || f.name === '..' || isTempName(f.name) || f.name.includes('/')) continue;
      const p = joinPath(d, f.name);
      let kind: 'file' | 'dir' | undefined = f.isDirectory ? 'dir' : f.isFile ? 'file' : undefined;
      let size = f.size;
      let link: EntryLink | undefined;
      if (f.isSymbolicLink) {
        // Listed as itself, with what it resolves to here (see Entry.link).
        link = this.linkTarget(d, f.link);
        const st = link.target !== undefined ? await this.statWith(c, link.target).catch(() => undefined) : undefined;
        if (link.target !== undefined && !st) link = { broken: 'dangling' };
        kind = st?.kind ?? 'file';
        size = st?.size ?? 0;
      }
      if (!kind) continue;
      const e: Entry = { path: p, name: f.name, kind, size: kind === 'dir' ? 0 : size };
      if (link) e.link = link;
      // MLSD times are exact; LIST ones are minute- or day-precise (stat asks MDTM for the exact one).
      const modTime = f.modifiedAt ?? parseListTime(f.rawModifiedAt);
      if (modTime && !Number.isNaN(modTime.getTime())) e.modTime = modTime;
      entries.push(e);
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Where a link in folder `d` leads, read from the listing's "name -> target" (resolved by its text). */
  private linkTarget(d: string, text: string | undefined): EntryLink {
    if (!text) return { broken: 'dangling' };
    const remote = posix.normalize(text.startsWith('/') ? text : posix.join(this.remote(d), text));
    const root = this.root || '/';
    if (root !== '/' && remote !== root && !remote.startsWith(root + '/')) return { broken: 'outside' };
    const below = root === '/' ? remote : remote.slice(root.length) || '/';
    if (below.split('/').includes('..')) return { broken: 'outside' };
    return { target: cleanPath(below) };
  }

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const d = cleanPath(dir);
    if (hidden(d)) throw new ProviderError('not_found', `not found: ${d}`);
    if (opts.signal?.aborted) throw canceled();
    const size = Math.max(1, opts.pageSize ?? this.pageSize);
    const after = opts.pageToken;
    const snap = this.snapshots.get(d);
    const entries =
      after !== undefined && snap && Date.now() - snap.at < SNAPSHOT_TTL_MS
        ? snap.entries
        : await this.pool
            .use((c) => this.listWith(c, d))
            .catch((err: unknown) => {
              throw ftpError(err, d);
            });
    this.knownDirs.add(d);
    // The page token is the last name returned: stable even when the listing is fetched again.
    const start = after === undefined ? 0 : entries.findIndex((e) => e.name > after);
    const slice = start < 0 ? [] : entries.slice(start, start + size);
    const more = start >= 0 && start + size < entries.length;
    this.snapshots.delete(d);
    if (more) {
      this.snapshots.set(d, { at: Date.now(), entries });
      while (this.snapshots.size > MAX_SNAPSHOTS) {
        const oldest = this.snapshots.keys().next().value;
        if (oldest === undefined) break;
        this.snapshots.delete(oldest);
      }
    }
    const last = slice[slice.length - 1];
    return more && last ? { entries: slice, nextPageToken: last.name } : { entries: slice };
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const p = cleanPath(path);
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    if (opts.signal?.aborted) throw canceled();
    // A cancel while this read waits for a connection ends the wait.
    const c = await this.pool.acquire(opts.signal);
    let st: Entry;
    try {
      st = await this.statWith(c, p);
    } catch (err) {
      this.pool.release(c);
      throw ftpError(err, p);
    }
    // Canceled while it looked the file up: no transfer is started (the listener below would miss it).
    if (opts.signal?.aborted) {
      this.pool.release(c);
      throw canceled();
    }
    if (st.kind === 'dir') {
      this.pool.release(c);
      throw new ProviderError('is_dir', `is a folder: ${p}`);
    }
    const start = opts.range?.start ?? 0;
    const endExcl = Math.min(st.size, opts.range?.end === undefined ? st.size : opts.range.end + 1);
    if (start >= endExcl) {
      this.pool.release(c);
      return Readable.from([]);
    }
    const ring = fileReadRing(endExcl - start);
    // Bytes still wanted; when a range ends before the file does, the transfer is cut off there.
    let remaining = endExcl < st.size ? endExcl - start : Infinity;
    let cutOff = false;
    let settled = false;
    const stop = () => {
      if (!c.closed) c.close();
    };
    /** What waits for the reader: a paused data socket, or a write of basic-ftp's pipe. */
    let waiting: (() => void) | undefined;
    // Failed before the caller listens (a refused data connection): reported to whoever reads, no crash.
    const out = keepErrorListener(
      new Readable({
        highWaterMark: 2 * ring.size,
        read() {
          const go = waiting;
          waiting = undefined;
          go?.();
        },
      }),
    );
    /** Passes a read on; false once the reader wants no more for now (or the range is complete). */
    const deliver = (chunk: Buffer): boolean => {
      if (remaining <= 0) return false;
      const data = chunk.length > remaining ? chunk.subarray(0, remaining) : chunk;
      remaining -= data.length;
      const more = out.push(data);
      if (remaining <= 0 && !cutOff) {
        cutOff = true;
        stop();
        return false;
      }
      return more;
    };
    const restoreSockets = readNextDataInto(c, ring, (chunk, socket) => {
      if (deliver(chunk)) return true;
      if (!cutOff) waiting = () => socket.resume();
      return false;
    });
    // Over TLS the data comes through basic-ftp's pipe into this sink instead.
    const sink = new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer, _enc, cb) {
        if (deliver(chunk) || cutOff) cb();
        else waiting = () => cb();
      },
    });
    const onAbort = () => {
      stop();
      out.destroy(canceled());
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    out.once('close', () => {
      opts.signal?.removeEventListener('abort', onAbort);
      // The reader went away early: end the transfer.
      if (!settled) stop();
    });
    c.downloadTo(sink, this.remote(p), start)
      // basic-ftp's own socket maker back (if unused) before the connection serves anything else.
      .finally(restoreSockets)
      .then(
        () => {
          settled = true;
          this.pool.release(c, cutOff);
          out.push(null);
        },
        (err: unknown) => {
          settled = true;
          this.pool.release(c, true);
          if (cutOff && remaining <= 0) out.push(null);
          else out.destroy(opts.signal?.aborted ? canceled() : ftpError(err, p));
        },
      );
    return out;
  }

  /** Creates each missing folder of `dir`, remembering which exist; one request per folder at a time. */
  private ensureDir(dir: string): Promise<void> {
    const d = cleanPath(dir);
    if (this.knownDirs.has(d)) return Promise.resolve();
    let pending = this.dirsInFlight.get(d);
    if (!pending) {
      pending = this.makeDir(d).finally(() => this.dirsInFlight.delete(d));
      this.dirsInFlight.set(d, pending);
    }
    return pending;
  }

  private async makeDir(d: string): Promise<void> {
    const parent = parentPath(d);
    if (parent !== d && !this.knownDirs.has(parent)) await this.ensureDir(parent);
    await this.pool
      .use(async (c) => {
        try {
          await c.send(`MKD ${this.remote(d)}`);
        } catch (err) {
          if (!(err instanceof FTPError)) throw err;
          // Exists already (or a file is there): look.
          const st = await this.statWith(c, d).catch(() => undefined);
          if (st?.kind === 'dir') return;
          if (st) throw new ProviderError('exists', `a file exists at ${d}`);
          throw err;
        }
      })
      .catch((err: unknown) => {
        throw ftpError(err, d);
      });
    this.knownDirs.add(d);
  }

  async mkdir(path: string): Promise<void> {
    const p = cleanPath(path);
    for (const seg of pathSegments(p)) checkFtpName(seg);
    this.knownDirs.delete(p);
    await this.ensureDir(p);
  }

  /** Sets a file's modification time where the server allows it. */
  private async setModTime(c: Client, remotePath: string, t: Date): Promise<void> {
    if (this.mfmt) await c.send(`MFMT ${ftpTime(t)} ${remotePath}`).catch(() => undefined);
    else if (this.mdtmWrite) await c.send(`MDTM ${ftpTime(t)} ${remotePath}`).catch(() => undefined);
  }

  /** RNFR/RNTO onto `to`, replacing a file there when the server refuses to. */
  private async renameReplacing(c: Client, from: string, to: string): Promise<void> {
    try {
      await c.rename(from, to);
    } catch (err) {
      if (!(err instanceof FTPError)) throw err;
      const gone = await c.remove(to).then(
        () => true,
        () => false,
      );
      if (!gone) throw err;
      await c.rename(from, to);
    }
  }

  private async deleteQuietly(remotePath: string): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const ok = await this.pool
        .use((c) => c.remove(remotePath))
        .then(
          () => true,
          (err: unknown) => isFtpCode(err, 550),
        );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    checkFtpName(baseName(p));
    if (opts.signal?.aborted) {
      body.destroy();
      throw canceled();
    }
    try {
      await this.ensureDir(parentPath(p));
    } catch (err) {
      body.destroy();
      throw err;
    }
    const tmp = this.remote(joinPath(parentPath(p), tempName(opts.tempTag)));
    const tmpKey = `${this.accountKey}|${tmp}`;
    let written = 0;
    let uploaded = false;
    let entry: Entry | undefined;
    const secure = this.secure;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        written += chunk.length;
        opts.onProgress?.(written);
        cb(null, chunk);
      },
      flush(cb) {
        // An empty file over TLS: closing the data connection right after its handshake makes
        // vsftpd drop the session (TLS alert), so give the server a moment first.
        if (secure && written === 0) setTimeout(cb, 250);
        else cb();
      },
    });
    relayErrors(body, counter);
    try {
      await this.pool.useOnce(
        async (c) => {
          // A cancel from here on closes the connection, whatever it is doing.
          const onAbort = () => {
            body.destroy(canceled());
            c.close();
          };
          opts.signal?.addEventListener('abort', onAbort, { once: true });
          try {
            if (opts.signal?.aborted) throw canceled();
            if (await this.isDir(c, p)) throw new ProviderError('is_dir', `is a folder: ${p}`);
            await this.sweepBeforeWrite(c, parentPath(p));
            activeTemps.add(tmpKey);
            // A source that failed while this waited is not uploaded from.
            if (counter.destroyed || opts.signal?.aborted) throw counter.errored ?? canceled();
            uploaded = true;
            await c.uploadFrom(body.pipe(counter), tmp);
          } finally {
            opts.signal?.removeEventListener('abort', onAbort);
          }
          if (opts.signal?.aborted) throw canceled();
          if (src.size >= 0 && written !== src.size) {
            throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, got ${written}`);
          }
          if (src.modTime) await this.setModTime(c, tmp, src.modTime);
          await this.renameReplacing(c, tmp, this.remote(p));
          uploaded = false;
          // The size is what was sent; only the time the server keeps is asked for (one MDTM).
          const modTime = await c.lastMod(this.remote(p)).catch(() => undefined);
          entry = { path: p, name: baseName(p), kind: 'file', size: written };
          if (modTime && !Number.isNaN(modTime.getTime())) entry.modTime = modTime;
        },
        false,
        opts.signal,
      );
    } catch (err) {
      body.destroy();
      if (uploaded) await this.deleteQuietly(tmp);
      if (opts.signal?.aborted) throw canceled();
      throw ftpError(err, p);
    } finally {
      activeTemps.delete(tmpKey);
    }
    this.snapshots.delete(parentPath(p));
    return entry ?? this.stat(p);
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    await this.pool
      .use(async (c) => {
        if (await this.isDir(c, p)) throw new ProviderError('is_dir', `is a folder: ${p}`);
        await c.remove(this.remote(p));
      })
      .catch((err: unknown) => {
        throw ftpError(err, p);
      });
    this.snapshots.delete(parentPath(p));
  }

  private async removeTree(c: Client, d: string): Promise<void> {
    await c.cd(this.remote(d));
    const infos = await c.list();
    for (const f of infos) {
      if (f.name === '.' || f.name === '..' || f.name.includes('/')) continue;
      const child = joinPath(d, f.name);
      if (f.isDirectory) await this.removeTree(c, child);
      else await c.remove(this.remote(child));
    }
    await c.send(`RMD ${this.remote(d)}`);
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'refusing to remove the root folder');
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    await this.pool
      .use(async (c) => {
        // A link to a folder is removed itself (DELE), never what it leads to.
        const listed = (await this.listWith(c, parentPath(p))).find((e) => e.name === baseName(p));
        if (listed?.link) {
          await c.remove(this.remote(p));
          return;
        }
        const st = await this.statWith(c, p);
        if (st.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${p}`);
        await this.removeTree(c, p);
      })
      .catch((err: unknown) => {
        throw ftpError(err, p);
      });
    for (const d of [...this.knownDirs]) if (d !== '/' && isWithin(p, d)) this.knownDirs.delete(d);
    this.snapshots.clear();
  }

  private async moveInside(from: string, to: string, replaceFile: boolean): Promise<void> {
    if (hidden(from)) throw new ProviderError('not_found', `not found: ${from}`);
    if (from === '/' || to === '/') throw new ProviderError('invalid_name', `cannot move ${from} to ${to}`);
    if (to.startsWith(from + '/')) throw new ProviderError('invalid_name', `cannot move ${from} into itself`);
    checkFtpName(baseName(to));
    await this.ensureDir(parentPath(to));
    await this.pool
      .use(async (c) => {
        const srcSt = await this.statWith(c, from);
        const dstSt = await this.statWith(c, to).catch((err: unknown) => {
          if (ProviderError.is(err, 'not_found')) return undefined;
          throw err;
        });
        if (dstSt) {
          if (!replaceFile || srcSt.kind === 'dir' || dstSt.kind === 'dir') {
            throw new ProviderError('exists', `already exists: ${to}`);
          }
          await this.renameReplacing(c, this.remote(from), this.remote(to));
        } else {
          await c.rename(this.remote(from), this.remote(to));
        }
        if (srcSt.kind === 'dir') {
          for (const d of [...this.knownDirs]) if (d !== '/' && isWithin(from, d)) this.knownDirs.delete(d);
        }
      })
      .catch((err: unknown) => {
        throw ftpError(err, from);
      });
    this.snapshots.clear();
  }

  async rename(path: string, newName: string): Promise<Entry> {
    const p = cleanPath(path);
    checkFtpName(newName);
    if (p === '/') throw new ProviderError('permission', 'cannot rename the root folder');
    const dst = joinPath(parentPath(p), newName);
    if (dst === p) return this.stat(p);
    await this.moveInside(p, dst, false);
    return this.stat(dst);
  }

  async move(src: Entry, dst: string): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === to) return this.stat(to);
    await this.moveInside(from, to, src.kind === 'file');
    return this.stat(to);
  }

  async removeTemps(dir: string, tag: string, opts: { signal?: AbortSignal } = {}): Promise<number> {
    const d = cleanPath(dir);
    if (opts.signal?.aborted) throw canceled();
    return this.pool
      .use(async (c) => {
        try {
          await c.cd(this.remote(d));
        } catch (err) {
          if (err instanceof FTPError) return 0; // no such folder: nothing left there
          throw err;
        }
        let removed = 0;
        for (const f of await c.list()) {
          if (!f.isFile || !isTaggedTemp(f.name, tag)) continue;
          const remote = this.remote(joinPath(d, f.name));
          if (activeTemps.has(`${this.accountKey}|${remote}`)) continue;
          await c.remove(remote);
          removed++;
        }
        return removed;
      })
      .catch((err: unknown) => {
        throw ftpError(err, d);
      });
  }

  async close(): Promise<void> {
    this.pool.close();
  }
}

function str(credentials: Record<string, unknown>, key: string): string | undefined {
  const v = credentials[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Opens an FTP or FTPS cloud. Credentials: `host`, `port` (default 21), `username`, `password`,
 * `secure` (explicit FTPS: AUTH TLS before login, TLS on data connections too). A server with a
 * self-signed certificate is trusted by pinning it: `tls_fingerprint` (its SHA-256 fingerprint, as
 * `openssl x509 -fingerprint -sha256` prints it), checked before the password is sent;
 * `insecure_skip_verify: true` accepts any certificate (unsafe, for testing). Optional `root`:
 * the remote folder shown as "/" (default the login's start folder).
 */
export async function openFtp(
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
  opts: FtpOptions = {},
): Promise<FtpProvider> {
  const host = str(credentials, 'host');
  if (!host) throw new ProviderError('invalid_name', 'an FTP host is required', { retry: 'fatal' });
  // Forms send an empty port when the default is meant.
  const rawPort = credentials.port;
  const port = rawPort === undefined || rawPort === null || rawPort === '' ? 21 : Number(rawPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ProviderError('invalid_name', `bad port: ${String(credentials.port)}`, { retry: 'fatal' });
  }
  const login: FtpLogin = {
    host,
    port,
    username: str(credentials, 'username') ?? 'anonymous',
    password: typeof credentials.password === 'string' ? credentials.password : '',
    secure: credentials.secure === true || credentials.secure === 'true',
  };
  const timeoutMs = opts.timeoutMs ?? ctx.timeoutMs;
  if (timeoutMs !== undefined) login.timeoutMs = timeoutMs;
  if (ctx.outbound) login.guard = ctx.outbound;
  const fp = str(credentials, 'tls_fingerprint');
  if (fp) login.tlsFingerprint = fp;
  if (credentials.insecure_skip_verify === true || credentials.insecure_skip_verify === 'true') {
    login.insecureSkipVerify = true;
  }
  const { client, welcome } = await connectFtp(login);
  try {
    const features = await client.features();
    const wanted = str(credentials, 'root');
    if (wanted) await client.cd(wanted);
    const root = await client.pwd();
    const scheme = login.secure ? 'ftps' : 'ftp';
    const accountKey = `${scheme}:${login.username}@${host}:${port}${root}`;
    const pacer = pacerFor(accountKey, {
      rateLimitPerSecond: ctx.rateLimitPerSecond,
      mapError: (e) => ftpError(e, root),
    });
    const pool = new FtpPool(login, Math.max(1, opts.maxConnections ?? 4), client, pacer);
    return new FtpProvider(pool, root, accountKey, features, welcome, login.secure, opts);
  } catch (err) {
    client.close();
    throw ftpError(err, str(credentials, 'root') ?? '/');
  }
}
