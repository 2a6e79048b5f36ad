import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { Code, UPLOAD_PART_SIZE, type UploadSession } from '@skyferry/contract';
import type { Entry } from '@skyferry/providers';
import { ApiError, errors } from '../../http/errors.ts';
import type { ProviderLease } from './provider-pool.ts';

/**
 * Resumable uploads. A session feeds one streaming write to the cloud (the backend's own `put`,
 * which goes up as a multipart upload through its chunk writer for large files), opened when the
 * session starts and fed part by part as the client sends them. A part is read whole (at most
 * UPLOAD_PART_SIZE bytes in memory) before any of it goes on, so a connection dropped mid-part
 * leaves the session at the last whole part and the client resumes from the offset GET reports.
 * Nothing is written to the server's disk. A session lives in the memory of the process that opened
 * it: it survives dropped connections and pauses (an idle hour at most; a WebDAV server may end the
 * open write sooner), not a restart of that process. With several API processes, each session is
 * also recorded in the database with the address of its process (`registry`, once `listenAt` gave
 * one), so a process that receives a call for a session it does not hold passes the call on
 * (`locate`); a session whose process stopped answers upload_lost.
 */

/** The sessions of every API process (see UploadSessionsRepository). */
export interface UploadRegistry {
  record(row: { id: string; owner: string; processUrl: string; expiresAt: number }): Promise<void>;
  find(id: string, now?: number): Promise<{ owner: string; processUrl: string } | undefined>;
  extend(id: string, expiresAt: number): Promise<void>;
  forget(id: string): Promise<void>;
}

export interface UploadOwner {
  /** `u:<userId>` or `v:<visitorId>`. */
  key: string;
}

interface Session {
  id: string;
  owner: string;
  cloudId: string;
  path: string;
  size: number;
  offset: number;
  expiresAt: number;
  pipe: PassThrough;
  done: Promise<Entry>;
  failure: unknown;
  lease: ProviderLease;
  /** Parts are taken one at a time. */
  queue: Promise<unknown>;
  finished: boolean;
  /** The expiry last written to the registry (undefined: not recorded there). */
  recordedExpiry: number | undefined;
}

export interface UploadSessionsOptions {
  idleMs?: number;
  partSize?: number;
  now?: () => number;
  /** Told when a session ends, successfully or not (to invalidate the listing cache). */
  onSettled?: (cloudId: string, path: string) => void;
  /** Maps a failure of the cloud write to the API's answer (and marks expired clouds). */
  mapError: (err: unknown, lease: ProviderLease) => Promise<ApiError>;
  /** Records sessions for the other API processes (absent: one process, nothing recorded). */
  registry?: UploadRegistry;
  /** Told when the registry could not be written (the session still works in this process). */
  onRegistryError?: (err: unknown) => void;
}

export class UploadSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  readonly partSize: number;
  private readonly now: () => number;
  private readonly options: UploadSessionsOptions;
  private readonly sweeper: NodeJS.Timeout;
  /** How the other API processes reach this one (set once it listens). */
  private address: string | undefined;

  constructor(options: UploadSessionsOptions) {
    this.options = options;
    this.idleMs = options.idleMs ?? 60 * 60_000;
    this.partSize = options.partSize ?? UPLOAD_PART_SIZE;
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Sessions opened from now on are recorded for the other processes, reachable at `url`. */
  listenAt(url: string): void {
    this.address = url.replace(/\/+$/, '');
  }

  get count(): number {
    return this.sessions.size;
  }

  private view(s: Session): UploadSession {
    return {
      upload_id: s.id,
      path: s.path,
      size: s.size,
      offset: s.offset,
      part_size: this.partSize,
      expires_at: s.expiresAt,
    };
  }

  /** Opens a session over a lease the caller acquired (released when the session ends). */
  async open(
    owner: UploadOwner,
    lease: ProviderLease,
    path: string,
    size: number,
    modTime?: Date,
  ): Promise<UploadSession> {
    const id = randomBytes(16).toString('base64url');
    const expiresAt = this.now() + this.idleMs;
    const { registry } = this.options;
    // Recorded before the write starts: a failure here leaves nothing open in the cloud.
    if (registry && this.address) await registry.record({ id, owner: owner.key, processUrl: this.address, expiresAt });
    const pipe = new PassThrough({ highWaterMark: 1024 * 1024 });
    // An abandoned upload fails the put through the destroyed stream (see Provider.put).
    pipe.on('error', () => undefined);
    const s: Session = {
      id,
      owner: owner.key,
      cloudId: lease.cloud.id,
      path,
      size,
      offset: 0,
      expiresAt,
      pipe,
      done: lease.provider.put(path, pipe, { size, modTime }),
      failure: undefined,
      lease,
      queue: Promise.resolve(),
      finished: false,
      recordedExpiry: registry && this.address ? expiresAt : undefined,
    };
    // A write that fails while no part is being sent is kept for the next call.
    s.done.catch((err: unknown) => {
      s.failure ??= err;
    });
    this.sessions.set(s.id, s);
    return this.view(s);
  }

  private get(owner: UploadOwner, id: string): Session {
    const s = this.sessions.get(id);
    if (!s || s.owner !== owner.key) throw errors.notFound();
    return s;
  }

  /**
   * Where the session `id` of `owner` is held: here, or in the process at `at` (whose address the
   * registry gave). Not found for a session that is nobody's or someone else's; upload_lost for
   * one whose process no longer holds it (`passedOn`: another process found it recorded as ours).
   */
  async locate(owner: UploadOwner, id: string, passedOn = false): Promise<{ here: true } | { at: string }> {
    const { registry } = this.options;
    if (this.sessions.has(id) || !registry) return { here: true };
    const row = await registry.find(id, this.now());
    if (!row || row.owner !== owner.key) throw errors.notFound();
    if (passedOn || row.processUrl === this.address) throw await this.lost(id);
    return { at: row.processUrl };
  }

  /** The session's process stopped (or cannot be reached): its record goes, the caller starts again. */
  async lost(id: string): Promise<ApiError> {
    await this.options.registry?.forget(id).catch((err: unknown) => this.options.onRegistryError?.(err));
    return new ApiError(Code.NOT_FOUND, 'upload_lost');
  }

  status(owner: UploadOwner, id: string): UploadSession {
    return this.view(this.get(owner, id));
  }

  private async failed(s: Session): Promise<ApiError> {
    const error = await this.options.mapError(s.failure, s.lease);
    this.end(s);
    return error;
  }

  /**
   * Takes one part starting at `offset`. A part already taken (a retry after a lost answer) is
   * read and dropped; a gap answers 409006 with the session's offset in data.
   */
  async writePart(
    owner: UploadOwner,
    id: string,
    offset: number,
    body: Readable,
    declaredLength?: number,
  ): Promise<{ offset: number }> {
    const s = this.get(owner, id);
    const run = s.queue.then(() => this.takePart(s, offset, body, declaredLength));
    s.queue = run.catch(() => undefined);
    return run;
  }

  private async takePart(
    s: Session,
    offset: number,
    body: Readable,
    declaredLength?: number,
  ): Promise<{ offset: number }> {
    if (s.finished) throw errors.notFound();
    if (s.failure !== undefined) throw await this.failed(s);
    if (declaredLength !== undefined && declaredLength > this.partSize) {
      body.resume();
      throw new ApiError(Code.PAYLOAD_TOO_LARGE, 'body_too_large');
    }
    const part = await readPart(body, this.partSize);
    if (part === 'too_large') throw new ApiError(Code.PAYLOAD_TOO_LARGE, 'body_too_large');
    if (part === 'aborted') throw errors.badRequest('invalid_request', { detail: 'the part did not arrive whole' });
    if (declaredLength !== undefined && part.length !== declaredLength) {
      throw errors.badRequest('invalid_request', { detail: 'the part did not arrive whole' });
    }
    s.expiresAt = this.now() + this.idleMs;
    this.extendRecord(s);
    if (offset + part.length <= s.offset && offset < s.offset) return { offset: s.offset };
    if (offset !== s.offset) {
      throw new ApiError(
        Code.CONFLICT,
        'invalid_request',
        { detail: `the next part starts at ${s.offset}` },
        { offset: s.offset },
      );
    }
    const end = offset + part.length;
    if (end > s.size) throw errors.badRequest('invalid_request', { detail: `the file has ${s.size} bytes` });
    if (part.length !== this.partSize && end !== s.size) {
      throw errors.badRequest('invalid_request', { detail: `parts have ${this.partSize} bytes, except the last` });
    }
    if (part.length > 0 && !s.pipe.write(part)) {
      // Wait until the cloud has taken it (or the write failed).
      await Promise.race([
        once(s.pipe, 'drain'),
        s.done.then(
          () => undefined,
          () => undefined,
        ),
      ]);
    }
    if (s.failure !== undefined) throw await this.failed(s);
    s.offset = end;
    return { offset: s.offset };
  }

  /** Publishes the file once every byte arrived; answers the new entry. */
  async complete(owner: UploadOwner, id: string): Promise<{ entry: Entry; lease: ProviderLease }> {
    const s = this.get(owner, id);
    await s.queue;
    if (s.failure !== undefined) throw await this.failed(s);
    if (s.offset !== s.size) {
      throw new ApiError(
        Code.CONFLICT,
        'invalid_request',
        { detail: `${s.size - s.offset} bytes are missing` },
        { offset: s.offset },
      );
    }
    s.pipe.end();
    try {
      const entry = await s.done;
      return { entry, lease: s.lease };
    } catch (err) {
      s.failure ??= err;
      throw await this.failed(s);
    } finally {
      this.end(s);
    }
  }

  /** Abandons a session: the cloud discards what it received. */
  abort(owner: UploadOwner, id: string): void {
    this.cancel(this.get(owner, id));
  }

  private cancel(s: Session): void {
    if (s.finished) return;
    s.failure ??= new Error('upload abandoned');
    s.pipe.destroy(new Error('upload abandoned'));
    this.end(s);
  }

  /** Moves the recorded expiry on when a quarter of the idle time has passed since it was written. */
  private extendRecord(s: Session): void {
    const { registry } = this.options;
    if (!registry || s.recordedExpiry === undefined || s.expiresAt - s.recordedExpiry < this.idleMs / 4) return;
    s.recordedExpiry = s.expiresAt;
    registry.extend(s.id, s.expiresAt).catch((err: unknown) => this.options.onRegistryError?.(err));
  }

  private end(s: Session): void {
    if (s.finished) return;
    s.finished = true;
    this.sessions.delete(s.id);
    if (s.recordedExpiry !== undefined)
      this.options.registry?.forget(s.id).catch((err: unknown) => this.options.onRegistryError?.(err));
    // The backend cleans up after its own write (temporary files, multipart uploads) once it fails.
    void s.done
      .catch(() => undefined)
      .finally(() => {
        s.lease.release();
        this.options.onSettled?.(s.cloudId, s.path);
      });
  }

  private sweep(): void {
    const now = this.now();
    for (const s of [...this.sessions.values()]) if (s.expiresAt < now) this.cancel(s);
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const s of [...this.sessions.values()]) this.cancel(s);
  }
}

/** Reads a part whole: its bytes, or 'too_large' past `max`, or 'aborted' when the connection dropped. */
export async function readPart(body: Readable, max: number): Promise<Buffer | 'too_large' | 'aborted'> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      length += buf.length;
      if (length > max) {
        body.destroy();
        return 'too_large';
      }
      chunks.push(buf);
    }
  } catch {
    return 'aborted';
  }
  const raw = body as Readable & { aborted?: boolean; complete?: boolean };
  if (raw.aborted === true || raw.complete === false) return 'aborted';
  return Buffer.concat(chunks, length);
}
