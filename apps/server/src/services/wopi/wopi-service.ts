import type { Readable } from 'node:stream';
import {
  Code,
  WOPI_LOCK_MAX,
  WOPI_LOCK_TTL_MS,
  baseName,
  type CloudRef,
  type WopiSessionData,
} from '@skyferry/contract';
import { ApiError, errors } from '../../http/errors.ts';
import type { WopiLocksRepository } from '../../repositories/wopi-locks.ts';
import type { CloudIdentity } from '../clouds.ts';
import type { SecretBox } from '../crypto.ts';
import type { FilesService } from '../files/files-service.ts';

const TOKEN_PURPOSE = 'wopi-access-token';
const FILE_PURPOSE = 'wopi-file-id';

/** What a WOPI access token carries: one file of one cloud, for one caller, until when, and whether it may write. */
export interface WopiClaims {
  fileId: string;
  cloudId: string;
  path: string;
  identity: CloudIdentity;
  /** The user's session the token was issued in: it ends with it. */
  sessionId?: string;
  write: boolean;
  expiresAt: number;
  /** The operator's office-type app the token was made for. */
  officeApp?: number;
}

interface Wire {
  f: string;
  c: string;
  p: string;
  o: string;
  s?: string;
  w: 0 | 1;
  e: number;
  /** The operator's office-type app the token was made for: such tokens work without SKYFERRY_WOPI_CLIENT_URL. */
  a?: number;
}

/** A WOPI answer that is not 200: its status, and the lock to report (409s always carry X-WOPI-Lock). */
export class WopiError extends Error {
  readonly status: number;
  readonly lock: string | undefined;
  constructor(status: number, reason: string, lock?: string) {
    super(reason);
    this.status = status;
    this.lock = lock;
  }
}

const invalidToken = () => new WopiError(401, 'invalid access token');
const lockMismatch = (current: string, reason: string) => new WopiError(409, reason, current);

export interface WopiServiceOptions {
  files: FilesService;
  box: SecretBox;
  locks: WopiLocksRepository;
  /** Whether a user's session still works (TokenService.sessionActive). */
  sessionActive: (sessionId: string) => Promise<boolean>;
  /** The office server (SKYFERRY_WOPI_CLIENT_URL); undefined: the WOPI host is off. */
  officeUrl: string | undefined;
  tokenTtlMs: number;
  /** Largest document PutFile takes. */
  maxBytes: number;
  now?: () => number;
}

/** Version of a file for WOPI: changes whenever its size or modification time does. */
function versionOf(item: { size: number; modified: number }): string {
  return `${item.modified.toString(36)}-${item.size.toString(36)}`;
}

/**
 * The WOPI host: CheckFileInfo, GetFile, PutFile and the lock operations (Lock, GetLock,
 * RefreshLock, Unlock, UnlockAndRelock) on the files of the users' clouds, each call authorised by
 * an access token scoped to one file and one user (signed with the server's secret, expiring).
 * Locks live in the database (wopi_locks), shared by every API process, and expire after 30
 * minutes unless refreshed.
 */
export class WopiService {
  private readonly o: WopiServiceOptions;
  private readonly now: () => number;

  constructor(options: WopiServiceOptions) {
    this.o = options;
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.o.officeUrl !== undefined;
  }

  /** The WOPI id of a file: stable for the file (so locks are the file's), opaque, URL safe. */
  fileIdOf(cloudId: string, path: string): string {
    return this.o.box
      .mac(FILE_PURPOSE, `${cloudId}\n${path}`)
      .replace(/[^A-Za-z0-9_-]/g, '')
      .slice(0, 43);
  }

  /** An access token for one file of one of the caller's clouds (404 when it is not theirs or not a file). */
  async openSession(
    identity: CloudIdentity & { sessionId?: string },
    ref: CloudRef,
    path: string,
    mode: 'view' | 'edit',
    wopiBase: string,
    officeApp?: { appId: number; url: string },
  ): Promise<WopiSessionData> {
    const officeUrl = officeApp?.url ?? this.o.officeUrl;
    if (!officeUrl) throw errors.notFound();
    const { item } = await this.o.files.stat(identity, ref, path);
    if (item.type !== 1) throw errors.pathNotExist();
    const cloudId = ref.cloud_id ?? ref.token_id ?? '';
    const fileId = this.fileIdOf(cloudId, item.path);
    const expiresAt = this.now() + this.o.tokenTtlMs;
    const wire: Wire = {
      f: fileId,
      c: cloudId,
      p: item.path,
      o: 'userId' in identity ? `u:${identity.userId}` : `v:${identity.visitorId}`,
      w: mode === 'edit' ? 1 : 0,
      e: expiresAt,
    };
    if ('userId' in identity && identity.sessionId) wire.s = identity.sessionId;
    if (officeApp) wire.a = officeApp.appId;
    const body = Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url');
    return {
      file_id: fileId,
      access_token: `${body}.${this.o.box.mac(TOKEN_PURPOSE, body)}`,
      access_token_ttl: expiresAt,
      wopi_src: `${wopiBase}/files/${fileId}`,
      office_url: officeUrl,
    };
  }

  /**
   * The claims of a valid token for `fileId`; 401 otherwise. Without an office server configured
   * the host is off (404) but for the tokens made for an operator's office app.
   */
  async authorize(fileId: string, token: string | undefined): Promise<WopiClaims> {
    if (this.o.officeUrl) return this.verify(fileId, token);
    const claims = await this.verify(fileId, token).catch(() => undefined);
    if (!claims?.officeApp) throw new WopiError(404, 'no office server is configured');
    return claims;
  }

  private async verify(fileId: string, token: string | undefined): Promise<WopiClaims> {
    if (!token) throw invalidToken();
    const dot = token.lastIndexOf('.');
    if (dot <= 0) throw invalidToken();
    const body = token.slice(0, dot);
    if (!this.o.box.verifyMac(TOKEN_PURPOSE, body, token.slice(dot + 1))) throw invalidToken();
    let wire: Wire;
    try {
      wire = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Wire;
    } catch {
      throw invalidToken();
    }
    if (wire.f !== fileId || typeof wire.e !== 'number' || wire.e < this.now()) throw invalidToken();
    const identity: CloudIdentity | undefined = wire.o.startsWith('u:')
      ? { kind: 'user', userId: wire.o.slice(2) }
      : wire.o.startsWith('v:')
        ? { kind: 'visitor', visitorId: wire.o.slice(2) }
        : undefined;
    if (!identity) throw invalidToken();
    if (wire.s !== undefined && !(await this.o.sessionActive(wire.s))) throw invalidToken();
    return {
      fileId,
      cloudId: wire.c,
      path: wire.p,
      identity,
      sessionId: wire.s,
      write: wire.w === 1,
      expiresAt: wire.e,
      ...(typeof wire.a === 'number' ? { officeApp: wire.a } : {}),
    };
  }

  private async stat(c: WopiClaims) {
    return this.o.files.stat(c.identity, { cloud_id: c.cloudId }, c.path);
  }

  /** CheckFileInfo: the file, the user and what the host supports. */
  async checkFileInfo(c: WopiClaims): Promise<Record<string, string | number | boolean>> {
    const { item, writable } = await this.stat(c);
    const user = 'userId' in c.identity ? c.identity.userId : `visitor-${c.identity.visitorId}`;
    const canWrite = c.write && writable;
    return {
      BaseFileName: baseName(item.path),
      OwnerId: user,
      Size: item.size,
      UserId: user,
      Version: versionOf(item),
      ...(item.modified > 0 ? { LastModifiedTime: new Date(item.modified).toISOString() } : {}),
      UserCanWrite: canWrite,
      ReadOnly: !canWrite,
      UserCanNotWriteRelative: true,
      UserCanRename: false,
      SupportsLocks: true,
      SupportsGetLock: true,
      SupportsExtendedLockLength: true,
      SupportsUpdate: true,
      SupportsRename: false,
      SupportsDeleteFile: true,
    };
  }

  /** GetFile: the bytes; 412 when the file is larger than the client expects. */
  async getFile(
    c: WopiClaims,
    maxExpected: number | undefined,
    signal: AbortSignal,
  ): Promise<{ stream: Readable; size: number; version: string; release: () => void }> {
    const { item } = await this.stat(c);
    if (maxExpected !== undefined && item.size > maxExpected) throw new WopiError(412, 'larger than expected');
    const d = await this.o.files.download(c.identity, c.cloudId, [c.path], undefined, signal);
    if (d.kind !== 'file') {
      d.release();
      throw new WopiError(404, 'not a file');
    }
    try {
      return { stream: await d.open(), size: d.entry.size, version: versionOf(item), release: () => d.release() };
    } catch (err) {
      d.release();
      throw err;
    }
  }

  private requireWrite(c: WopiClaims): void {
    if (!c.write) throw new WopiError(401, 'the access token is for viewing');
  }

  private checkLockId(lock: string | undefined): string {
    if (!lock) throw new WopiError(400, 'X-WOPI-Lock is missing');
    if (lock.length > WOPI_LOCK_MAX) throw new WopiError(400, 'X-WOPI-Lock is too long');
    return lock;
  }

  /** PutFile: writes the document; the caller must hold its lock (or the file must be empty and unlocked). */
  async putFile(c: WopiClaims, lock: string | undefined, body: Readable, size: number): Promise<{ version: string }> {
    this.requireWrite(c);
    if (size > this.o.maxBytes) throw new WopiError(413, 'the document is too large');
    const current = await this.o.locks.current(c.fileId, this.now());
    if (current === undefined) {
      const { item } = await this.stat(c);
      if (item.size !== 0) throw lockMismatch('', 'the file is not locked');
    } else if (current !== lock) {
      throw lockMismatch(current, 'the file is locked by another lock');
    }
    const written = await this.o.files.upload(c.identity, c.cloudId, c.path, body, { size, overwrite: true });
    return { version: versionOf(written) };
  }

  /** LOCK with X-WOPI-OldLock is UnlockAndRelock; without it, Lock (the same lock again refreshes it). */
  async lock(c: WopiClaims, lock: string | undefined, oldLock: string | undefined): Promise<{ version: string }> {
    this.requireWrite(c);
    const id = this.checkLockId(lock);
    const { item } = await this.stat(c);
    const now = this.now();
    if (oldLock !== undefined) {
      const swapped = await this.o.locks.swap(c.fileId, oldLock, id, now, now + WOPI_LOCK_TTL_MS);
      if (!swapped)
        throw lockMismatch((await this.o.locks.current(c.fileId, now)) ?? '', 'the old lock does not match');
    } else {
      const held = await this.o.locks.take(c.fileId, id, now, now + WOPI_LOCK_TTL_MS);
      if (held !== id) throw lockMismatch(held, 'the file is locked by another lock');
    }
    return { version: versionOf(item) };
  }

  /** DeleteFile: removes the document (to the cloud's trash where it has one); 409 while anyone holds its lock. */
  async deleteFile(c: WopiClaims): Promise<void> {
    this.requireWrite(c);
    await this.stat(c);
    const current = await this.o.locks.current(c.fileId, this.now());
    if (current !== undefined) throw lockMismatch(current, 'the file is locked');
    const result = await this.o.files.delete(c.identity, { cloud_id: c.cloudId }, [c.path], false);
    const failed = result.failed[0];
    if (failed) throw failed.error;
  }

  /** GetLock: the current lock ('' when none). */
  async getLock(c: WopiClaims): Promise<string> {
    await this.stat(c);
    return (await this.o.locks.current(c.fileId, this.now())) ?? '';
  }

  /** RefreshLock: another 30 minutes for the caller's lock. */
  async refreshLock(c: WopiClaims, lock: string | undefined): Promise<void> {
    this.requireWrite(c);
    const id = this.checkLockId(lock);
    await this.stat(c);
    const now = this.now();
    if (!(await this.o.locks.refresh(c.fileId, id, now, now + WOPI_LOCK_TTL_MS))) {
      throw lockMismatch((await this.o.locks.current(c.fileId, now)) ?? '', 'the lock does not match');
    }
  }

  /** Unlock: releases the caller's lock. */
  async unlock(c: WopiClaims, lock: string | undefined): Promise<{ version: string }> {
    this.requireWrite(c);
    const id = this.checkLockId(lock);
    const { item } = await this.stat(c);
    const now = this.now();
    if (!(await this.o.locks.release(c.fileId, id, now))) {
      throw lockMismatch((await this.o.locks.current(c.fileId, now)) ?? '', 'the lock does not match');
    }
    return { version: versionOf(item) };
  }
}

/** A failure of the cloud behind a WOPI call, as WOPI's status: gone or not the user's is 404, the rest 500. */
export function wopiStatusOf(err: unknown): number {
  if (err instanceof WopiError) return err.status;
  if (err instanceof ApiError) {
    if (err.code === Code.NOT_FOUND || err.status === 403) return 404;
    if (err.status === 413) return 413;
  }
  return 500;
}
