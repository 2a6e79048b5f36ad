import type { Provider } from '@skyferry/providers';
import type { Logger } from 'pino';
import { errors } from '../../http/errors.ts';
import type { CloudIdentity, CloudRecord, CloudsService } from '../clouds.ts';

/** A provider lent to one file call; give it back with `release` (idle providers close after a while). */
export interface ProviderLease {
  cloud: CloudRecord;
  provider: Provider;
  release(): void;
}

interface Pooled {
  /**
   * The cloud row's updated_at when opened, and what the owner may reach (CloudsService.accessKey):
   * a reauthorisation, or a changed local-folder grant, reopens.
   */
  version: string;
  provider: Provider;
  users: number;
  idleTimer?: NodeJS.Timeout;
  touchedAt: number;
}

export interface ProviderPoolOptions {
  clouds: CloudsService;
  log: Logger;
  /** How long an unused provider stays open (its connections pooled), ms. */
  idleMs?: number;
  now?: () => number;
}

/**
 * Opened providers per cloud, shared by the file calls for a short while, so browsing an SFTP or
 * FTP cloud does not sign in again for every click. Ownership is checked on every acquire (the
 * cloud must be the caller's and authorised); only the opened connection is reused.
 */
export class ProviderPool {
  private readonly clouds: CloudsService;
  private readonly log: Logger;
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly pooled = new Map<string, Pooled>();
  private closed = false;

  constructor(options: ProviderPoolOptions) {
    this.clouds = options.clouds;
    this.log = options.log;
    this.idleMs = options.idleMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Lends the cloud's provider. Opening it, or using it again a minute later, records the cloud as
   * used, unless `touch` is false: reads the app makes on its own are no use of the cloud.
   */
  async acquire(identity: CloudIdentity, cloudId: string, opts: { touch?: boolean } = {}): Promise<ProviderLease> {
    const touch = opts.touch !== false;
    if (this.closed) throw errors.internal();
    const cloud = await this.clouds.get(identity, cloudId);
    if (cloud.status !== 'authorized') throw errors.cloudAuthExpired({ cloud_id: cloud.id });
    // Checked on every call, not only when opening: a revoked grant stops a pooled provider too.
    const version = `${cloud.updatedAt}\n${await this.clouds.accessKey(identity, cloud)}`;
    let entry = this.pooled.get(cloud.id);
    if (entry && entry.version !== version) {
      this.retire(cloud.id, entry);
      entry = undefined;
    }
    if (!entry) {
      const opened = await this.clouds.open(identity, cloud.id, { touch });
      // Another call may have opened it meanwhile: keep one.
      const raced = this.pooled.get(cloud.id);
      if (raced && raced.version === version) {
        void opened.provider.close?.().catch(() => undefined);
        entry = raced;
      } else {
        if (raced) this.retire(cloud.id, raced);
        entry = { version, provider: opened.provider, users: 0, touchedAt: touch ? this.now() : 0 };
        this.pooled.set(cloud.id, entry);
      }
    } else if (touch && this.now() - entry.touchedAt > 60_000) {
      entry.touchedAt = this.now();
      await this.clouds.touch(cloud.id);
    }
    const held = entry;
    held.users += 1;
    if (held.idleTimer) clearTimeout(held.idleTimer);
    held.idleTimer = undefined;
    let released = false;
    return {
      cloud,
      provider: held.provider,
      release: () => {
        if (released) return;
        released = true;
        held.users -= 1;
        if (held.users > 0) return;
        if (this.pooled.get(cloud.id) !== held) {
          void held.provider.close?.().catch(() => undefined);
          return;
        }
        held.idleTimer = setTimeout(() => this.retire(cloud.id, held), this.idleMs);
        held.idleTimer.unref();
      },
    };
  }

  /** Forgets a cloud's provider (after its credentials changed or it was removed). */
  forget(cloudId: string): void {
    const entry = this.pooled.get(cloudId);
    if (entry) this.retire(cloudId, entry);
  }

  private retire(cloudId: string, entry: Pooled): void {
    if (this.pooled.get(cloudId) === entry) this.pooled.delete(cloudId);
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    if (entry.users === 0) {
      entry.provider
        .close?.()
        .catch((err: unknown) => this.log.debug({ err, cloud: cloudId }, 'closing provider failed'));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.pooled.values()];
    this.pooled.clear();
    for (const e of all) if (e.idleTimer) clearTimeout(e.idleTimer);
    await Promise.allSettled(all.map((e) => e.provider.close?.()));
  }
}
