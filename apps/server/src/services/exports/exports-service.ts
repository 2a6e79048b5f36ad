import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  Code,
  ExportStatus,
  joinPath,
  message,
  type ExportProgress,
  type Language,
  type MessageKey,
  type StartUploadBody,
} from '@skyferry/contract';
import type { OutboundGuard } from '@skyferry/providers';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import type { ExportTaskRow, ExportTasksRepository } from '../../repositories/exports.ts';
import type { CloudIdentity } from '../clouds.ts';
import { checkName, FilesService } from '../files/files-service.ts';
import { mapFileError } from '../files/errors.ts';
import type { LinkClaims } from '../files/links.ts';
import {
  decodeInline,
  openDownload,
  parseDownloadUrl,
  precheckHost,
  SizeMeter,
  tooLarge,
  type ExportSource,
} from './source.ts';

export interface ExportsServiceOptions {
  repo: ExportTasksRepository;
  files: FilesService;
  /** The same guard as clouds reached by address: a download_url is held to the same networks. */
  guard: OutboundGuard;
  /** Largest download an export may take. */
  maxBytes: number;
  log: Logger;
  /** How long a download may stay silent. */
  timeoutMs?: number;
  /**
   * A signed-in user's transfer allowance (UsersService, with billing on): an export needs data
   * left, and what it wrote is charged once. None: not counted.
   */
  traffic?: {
    remaining(userId: string): Promise<number>;
    charge(userId: string, bytes: number, key: string): Promise<unknown>;
  };
  now?: () => number;
}

/** Progress is written at most this often while bytes flow. */
const PROGRESS_EVERY_MS = 500;
/** A running export is written at least this often, bytes or not... */
const HEARTBEAT_MS = 5_000;
/** ...so one not written for this long belongs to a process that is gone: it has failed. */
const STALE_MS = 60_000;
/** Ended exports are kept this long for their polls. */
const KEEP_MS = 7 * 86_400_000;

/** Exports one owner may have under way in one process at once; more are 429001 until one ends. */
const MAX_RUNNING_PER_OWNER = 4;

type Owner = { userId: string } | { visitorId: string };
const ownerKey = (identity: CloudIdentity) =>
  'userId' in identity ? `u:${identity.userId}` : `v:${identity.visitorId}`;
const ownerOf = (identity: CloudIdentity): Owner =>
  'userId' in identity ? { userId: identity.userId } : { visitorId: identity.visitorId };

/**
 * Exports (spec sections 4 and 7): a file given inline or by address written into one of the
 * caller's clouds by the server. The work runs in the process that took the request; its state is
 * in the database, so any process answers the owner's polls, and only the owner's.
 */
export class ExportsService {
  private readonly o: ExportsServiceOptions;
  private readonly now: () => number;
  private readonly running = new Map<string, { owner: string; abort: AbortController; done: Promise<void> }>();

  constructor(options: ExportsServiceOptions) {
    this.o = options;
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks the request (the cloud is the caller's and writable, the name, the source) and starts
   * the export; answers its id at once. A refused address, a bad name or bad data is a 4xx here.
   */
  async start(identity: CloudIdentity, body: StartUploadBody): Promise<{ task_id: string }> {
    checkName(body.file_name);
    const key = ownerKey(identity);
    if ([...this.running.values()].filter((r) => r.owner === key).length >= MAX_RUNNING_PER_OWNER) {
      throw errors.rateLimited();
    }
    const parent = body.parent ?? '/';
    let open: (signal: AbortSignal) => Promise<ExportSource>;
    let size: number;
    if (body.base64_data !== undefined) {
      const bytes = decodeInline(body.base64_data);
      size = bytes.length;
      open = async () => ({ stream: Readable.from([bytes]), size: bytes.length });
    } else if (body.download_url?.startsWith('/')) {
      const source = this.ownLink(identity, body.download_url);
      size = 0;
      open = (signal) => this.openOwnLink(source, signal);
    } else {
      const url = parseDownloadUrl(body.download_url ?? '');
      try {
        await precheckHost(this.o.guard, url);
      } catch (err) {
        throw mapFileError(err).error;
      }
      if (body.file_size !== undefined && body.file_size > this.o.maxBytes) {
        throw tooLarge(this.o.maxBytes);
      }
      size = body.file_size ?? 0;
      open = (signal) =>
        openDownload(url, {
          guard: this.o.guard,
          maxBytes: this.o.maxBytes,
          expectedSize: body.file_size,
          timeoutMs: this.o.timeoutMs ?? 60_000,
          signal,
        });
    }
    await this.o.files.checkWritable(identity, body);
    if (this.o.traffic && 'userId' in identity) {
      const left = await this.o.traffic.remaining(identity.userId);
      // Like a transfer task: some data must be left, and all of it when the size is known.
      if (left <= 0 || size > left) throw new ApiError(Code.TRAFFIC_INSUFFICIENT, 'traffic_insufficient');
    }
    const now = this.now();
    await this.o.repo.purgeOlderThan(now - KEEP_MS);
    const owner = ownerOf(identity);
    const id = randomUUID();
    await this.o.repo.insert({
      id,
      user_id: 'userId' in owner ? owner.userId : null,
      visitor_id: 'visitorId' in owner ? owner.visitorId : null,
      cloud_id: FilesService.cloudIdOf(body),
      path: joinPath(parent, body.file_name),
      file_name: body.file_name,
      size,
      transferred: 0,
      status: ExportStatus.waiting,
      error_code: null,
      error_key: null,
      error_params: null,
      created_at: now,
      updated_at: now,
    });
    const abort = new AbortController();
    const done = this.run(id, identity, body, parent, open, abort.signal).finally(() => this.running.delete(id));
    this.running.set(id, { owner: key, abort, done });
    return { task_id: id };
  }

  /**
   * A download link of this server (`/api/cloud-manager/files?link=...`, from POST
   * /api/cloud-manager/download-link) issued to the caller: the export reads the cloud directly
   * (copying a file from one of the caller's clouds to another), never through the network.
   */
  private ownLink(identity: CloudIdentity, text: string): LinkClaims {
    const url = new URL(text, 'http://skyferry.invalid');
    const link = url.searchParams.get('link');
    if (url.origin !== 'http://skyferry.invalid' || url.pathname !== '/api/cloud-manager/files' || !link) {
      throw errors.badRequest('field_invalid', { field: 'download_url' });
    }
    const claims = this.o.files.resolveLink(link);
    const mine = ownerOf(identity);
    const theirs = ownerOf(claims.identity);
    const same =
      'userId' in mine
        ? 'userId' in theirs && theirs.userId === mine.userId
        : 'visitorId' in theirs && theirs.visitorId === mine.visitorId;
    if (!same) throw errors.notFound();
    return claims;
  }

  private async openOwnLink(claims: LinkClaims, signal: AbortSignal): Promise<ExportSource> {
    const d = await this.o.files.download(claims.identity, claims.cloudId, claims.paths, claims.name, signal);
    if (d.kind === 'zip') {
      d.stream.once('close', () => d.release());
      return { stream: d.stream, size: d.length };
    }
    try {
      const stream = await d.open();
      stream.once('close', () => d.release());
      return { stream, size: d.entry.size };
    } catch (err) {
      d.release();
      throw err;
    }
  }

  private async run(
    id: string,
    identity: CloudIdentity,
    body: StartUploadBody,
    parent: string,
    open: (signal: AbortSignal) => Promise<ExportSource>,
    signal: AbortSignal,
  ): Promise<void> {
    let written = 0;
    let saved = 0;
    let lastWrite = this.now();
    let writing: Promise<unknown> = Promise.resolve();
    // Bytes written so far go to the database every half second; a heartbeat when none flow.
    const timer = setInterval(() => {
      const now = this.now();
      if (written === saved && now - lastWrite < HEARTBEAT_MS) return;
      saved = written;
      lastWrite = now;
      writing = writing.then(() =>
        this.o.repo.update(id, { transferred: saved, updated_at: now }).catch(() => undefined),
      );
    }, PROGRESS_EVERY_MS);
    timer.unref();
    let meter: SizeMeter | undefined;
    let source: ExportSource | undefined;
    try {
      source = await open(signal);
      await this.o.repo.update(id, { size: source.size, updated_at: this.now() });
      meter = new SizeMeter(source.size, (bytes) => {
        written = bytes;
      });
      const src = source.stream;
      src.once('error', (err) => meter?.destroy(err));
      src.pipe(meter);
      const item = await this.o.files.writeNew(identity, body, parent, body.file_name, meter, {
        size: source.size,
        signal,
      });
      clearInterval(timer);
      await writing;
      if (this.o.traffic && 'userId' in identity)
        await this.o.traffic.charge(identity.userId, source.size, `export:${id}`);
      await this.o.repo.update(id, {
        status: ExportStatus.success,
        path: item.path,
        transferred: source.size,
        updated_at: this.now(),
      });
    } catch (err) {
      clearInterval(timer);
      source?.stream.destroy();
      // The meter's own finding (a download longer or shorter than announced) is the reason,
      // whatever the backend made of the broken stream.
      const failure: ApiError = meter?.failure ?? mapFileError(err).error;
      if (failure.status >= 500) this.o.log.warn({ err, export: id }, 'export failed');
      await writing;
      await this.o.repo
        .update(id, {
          status: ExportStatus.failed,
          transferred: written,
          error_code: failure.code,
          error_key: failure.key,
          error_params: JSON.stringify(failure.params),
          updated_at: this.now(),
        })
        .catch((e: unknown) => this.o.log.warn({ err: e, export: id }, 'export status not saved'));
    }
  }

  /** The export's progress, for its owner only (404 for anyone else). */
  async poll(identity: CloudIdentity, taskId: string, lang: Language): Promise<ExportProgress> {
    let row = await this.o.repo.find(ownerOf(identity), taskId);
    if (!row) throw errors.notFound();
    if (row.status === ExportStatus.waiting && row.updated_at < this.now() - STALE_MS && !this.running.has(row.id)) {
      // Its process is gone: the export failed (the partial file, if any, is the cloud's to keep).
      await this.o.repo.update(row.id, {
        status: ExportStatus.failed,
        error_code: Code.INTERNAL,
        error_key: 'server_error',
        error_params: '{}',
        updated_at: this.now(),
      });
      row = (await this.o.repo.find(ownerOf(identity), taskId)) ?? row;
    }
    return toProgress(row, lang);
  }

  /** Stops the exports under way (their status becomes -2) and waits for them. */
  async close(): Promise<void> {
    const all = [...this.running.values()];
    for (const r of all) r.abort.abort(new Error('the server is stopping'));
    await Promise.allSettled(all.map((r) => r.done));
  }
}

function toProgress(row: ExportTaskRow, lang: Language): ExportProgress {
  const status = row.status === 1 ? 1 : row.status === -2 ? -2 : 0;
  const percent = status === 1 ? 100 : row.size > 0 ? Math.min(99, Math.floor((row.transferred * 100) / row.size)) : 0;
  let error: ExportProgress['error'] = null;
  if (status === -2) {
    let params: Record<string, string | number>;
    try {
      params = JSON.parse(row.error_params ?? '{}') as Record<string, string | number>;
    } catch {
      params = {};
    }
    error = {
      code: row.error_code ?? Code.INTERNAL,
      msg: message(lang, (row.error_key ?? 'server_error') as MessageKey, params),
    };
  }
  return {
    task_id: row.id,
    status,
    percent,
    file_name: row.file_name,
    path: row.path,
    cloud_id: row.cloud_id,
    size: row.size,
    transferred: row.transferred,
    error,
  };
}
