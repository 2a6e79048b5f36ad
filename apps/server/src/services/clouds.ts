import { createHash } from 'node:crypto';
import {
  CLOUD_KINDS,
  CLOUD_KIND_INFO,
  CONTROL_CHARS_RE,
  Code,
  CloudType,
  CredentialsError,
  LIMITS,
  OBJECT_STORAGE_KINDS,
  checkCredentials,
  type Cloud,
  type CloudKind,
  type CloudKindInfo,
  type CloudsMeData,
  type Credentials,
  type Language,
  type MessageKey,
  type SystemCloudKind,
  message,
  systemCloudKind,
} from '@skyferry/contract';
import {
  ProviderError,
  openProvider,
  registeredKinds,
  toProviderError,
  type OutboundGuard,
  type Provider,
  type ProviderContext,
} from '@skyferry/providers';
import type { Logger } from 'pino';
import { ApiError, errors } from '../http/errors.ts';
import type { CloudOwner, CloudPatch, CloudRow, CloudsRepository } from '../repositories/clouds.ts';
import { SERVER_MACHINE_KINDS, type Authorization, type LocalAccess } from './authorization.ts';
import { newId, type SecretBox } from './crypto.ts';
import type { UsersService } from './users.ts';

/** Who a cloud belongs to, as the services see callers (see http/auth.ts Identity). */
export type CloudIdentity = { kind: 'user'; userId: string } | { kind: 'visitor'; visitorId: string } | CloudOwner;

export type { CredentialValue, Credentials } from '@skyferry/contract';

/** A connected cloud as services and workers see it (credentials stay inside this service). */
export interface CloudRecord {
  id: string;
  cloudId: string;
  kind: string;
  cloudAccount: string;
  alias: string;
  space: number;
  usedSpace: number;
  status: 'authorized' | 'expired';
  sort: number;
  flags: number;
  owner: CloudOwner;
  createdAt: number;
  updatedAt: number;
  lastUsedAt: number;
}

export type OAuthProviderName = NonNullable<CloudKindInfo['oauthProvider']>;

export interface CloudsServiceOptions {
  repo: CloudsRepository;
  users: UsersService;
  box: SecretBox;
  log: Logger;
  /** Who may connect and open the kinds that reach the server's own disk, and where. */
  authz: Authorization;
  /** OAuth clients the operator configured (google, microsoft, dropbox, box). */
  oauthConfigured: (provider: OAuthProviderName) => boolean;
  /** The outbound-connection guard every cloud reached by address connects through. */
  outbound: OutboundGuard;
  /** How long a cloud's server may stay silent before a call fails (undefined: backend defaults). */
  cloudTimeoutMs?: number | undefined;
  now?: () => number;
}

/** Fields that tell one account or store from another, per kind (the rest are settings or secrets). */
const IDENTITY_FIELDS: Partial<Record<CloudKind, readonly string[]>> = {
  amazon_s3: ['endpoint', 'bucket'],
  wasabi: ['endpoint', 'bucket'],
  backblaze_b2: ['endpoint', 'bucket'],
  s3_compatible: ['endpoint', 'bucket'],
  webdav: ['url', 'username'],
  sftp: ['host', 'port', 'username'],
  ftp: ['host', 'port', 'username'],
  local: ['path'],
};
/**
 * Identity fields that count only when set (a remote folder on the same server login is another
 * cloud), so clouds connected before the field existed keep their identity.
 */
const OPTIONAL_IDENTITY_FIELDS: Partial<Record<CloudKind, readonly string[]>> = {
  sftp: ['root'],
  ftp: ['root'],
};

/** The service refused the stored credentials (revoked, lapsed, or changed on the server): the cloud needs reauthorising. */
export function refusesCredentials(err: unknown): boolean {
  return ProviderError.is(err, 'auth_expired') || ProviderError.is(err, 'auth_invalid');
}

function kindInfo(kind: string): CloudKindInfo | undefined {
  return (CLOUD_KIND_INFO as Record<string, CloudKindInfo | undefined>)[kind];
}

function ownerOf(identity: CloudIdentity): CloudOwner {
  if ('userId' in identity) return { userId: identity.userId };
  return { visitorId: identity.visitorId };
}

function aadOf(id: string, what: 'credentials' | 'state'): string {
  return `cloud:${id}:${what}`;
}

/** A cloud's display name problems: control characters. */
function aliasProblem(alias: string): boolean {
  return CONTROL_CHARS_RE.test(alias);
}

function hostOfUrl(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** What the list shows as the account: bucket, user@host, folder path. Never a secret. */
export function cloudAccountOf(kind: string, c: Credentials): string {
  const s = (name: string) =>
    typeof c[name] === 'string' ? (c[name] as string) : c[name] === undefined ? '' : String(c[name]);
  if (OBJECT_STORAGE_KINDS.has(kind))
    return s('endpoint') ? `${s('bucket')} @ ${hostOfUrl(s('endpoint'))}` : s('bucket');
  if (kind === 'webdav') return s('username') ? `${s('username')}@${hostOfUrl(s('url'))}` : s('url');
  if (kind === 'sftp' || kind === 'ftp') {
    const login = `${s('username')}@${s('host')}${s('port') ? `:${s('port')}` : ''}`;
    return s('root') ? `${login} ${s('root')}` : login;
  }
  if (kind === 'local') return s('path');
  return s('account') || s('email') || kind;
}

/** A stable identity of the account at the service: equal for the same bucket, server user or folder. */
export function cloudIdOf(kind: string, c: Credentials): string {
  const fields = IDENTITY_FIELDS[kind as CloudKind];
  const parts = fields
    ? fields.map((f) =>
        String(c[f] ?? '')
          .trim()
          .toLowerCase()
          .replace(/\/+$/, ''),
      )
    : Object.keys(c)
        .filter((k) => !kindInfo(kind)?.fields.find((f) => f.name === k)?.secret)
        .sort()
        .map((k) => `${k}=${String(c[k])}`);
  for (const f of OPTIONAL_IDENTITY_FIELDS[kind as CloudKind] ?? []) {
    const v = String(c[f] ?? '').trim();
    if (v !== '') parts.push(`${f}=${v.replace(/(.)\/+$/, '$1')}`);
  }
  return createHash('sha256')
    .update(`${kind}\n${parts.join('\n')}`)
    .digest('hex')
    .slice(0, 32);
}

/**
 * Checks and normalises form credentials against the kind's fields (the contract's
 * `checkCredentials`, which the command line uses too), refusing with the API's 400 and message.
 */
export function normalizeCredentials(info: CloudKindInfo, raw: Record<string, unknown>): Credentials {
  try {
    return checkCredentials(info, raw);
  } catch (err) {
    if (err instanceof CredentialsError) throw errors.badRequest(err.key, err.params);
    throw err;
  }
}

/** Node's TLS verification failures (a self-signed or unknown certificate), anywhere in the cause chain. */
const UNTRUSTED_CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
function isUntrustedCertificate(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNTRUSTED_CERT_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Replaces any secret value that appears in a message (services sometimes echo input back). */
function scrub(text: string, credentials: Credentials, info: CloudKindInfo | undefined): string {
  let out = text;
  for (const field of info?.fields ?? []) {
    const v = credentials[field.name];
    if (field.secret && typeof v === 'string' && v.length >= 4) out = out.split(v).join('[redacted]');
  }
  return out.slice(0, 300);
}

/**
 * The clouds registry and connected clouds. Credentials are verified against the real service on
 * connect and reauthorisation, stored only encrypted, decrypted only in `open`, and never returned.
 */
export class CloudsService {
  private readonly repo: CloudsRepository;
  private readonly users: UsersService;
  private readonly box: SecretBox;
  private readonly log: Logger;
  private readonly authz: Authorization;
  private readonly oauthConfigured: (provider: OAuthProviderName) => boolean;
  private readonly now: () => number;
  private readonly outbound: OutboundGuard;
  private readonly cloudTimeoutMs: number | undefined;

  constructor(options: CloudsServiceOptions) {
    this.outbound = options.outbound;
    this.cloudTimeoutMs = options.cloudTimeoutMs;
    this.repo = options.repo;
    this.users = options.users;
    this.box = options.box;
    this.log = options.log;
    this.authz = options.authz;
    this.oauthConfigured = options.oauthConfigured;
    this.now = options.now ?? Date.now;
  }

  /**
   * Whether a kind can be connected on this server (for anyone), and why not, in words for the
   * user ("Not set up on this server."): how to set it up is the operator's guide's business.
   */
  availability(kind: string, language: Language = 'en'): { available: boolean; reason: string | null } {
    const info = kindInfo(kind);
    if (!info) return { available: false, reason: message(language, 'kind_not_available') };
    if (info.auth === 'oauth' && !this.oauthConfigured(info.oauthProvider ?? 'google')) {
      return { available: false, reason: message(language, 'kind_not_set_up') };
    }
    if (!registeredKinds().includes(kind)) {
      return { available: false, reason: message(language, 'kind_not_available') };
    }
    return { available: true, reason: null };
  }

  /** GET /api/system/clouds: every kind as this caller may use it; the local kind names the caller's folders. */
  async kinds(caller: CloudIdentity | undefined, language: Language): Promise<SystemCloudKind[]> {
    const owner = caller ? ownerOf(caller) : undefined;
    return Promise.all(
      CLOUD_KINDS.map(async (kind) => {
        const { available, reason } = this.availability(kind, language);
        if (!available || !SERVER_MACHINE_KINDS.has(kind)) return systemCloudKind(kind, available, reason);
        const access = await this.authz.localAccess(owner);
        if (!access.allowed) return systemCloudKind(kind, false, message(language, access.error.key));
        return { ...systemCloudKind(kind, true, null), roots: access.roots };
      }),
    );
  }

  /**
   * The kinds that reach the server's own disk: what this cloud's owner may reach, checked on every
   * connect, open and reuse; throws 403004 when the owner may not (visitors, users not allowed).
   */
  private async machineAccess(kind: string, owner: CloudOwner): Promise<LocalAccess | undefined> {
    if (!SERVER_MACHINE_KINDS.has(kind)) return undefined;
    const access = await this.authz.localAccess(owner);
    if (!access.allowed) throw access.error;
    return access;
  }

  /**
   * Checks that the caller may still use this cloud (its kind may reach the server's disk only
   * while the owner is allowed) and answers what an opened provider depends on beyond the
   * credentials: a pooled provider is reused only while this stays the same.
   */
  async accessKey(identity: CloudIdentity, cloud: CloudRecord): Promise<string> {
    const access = await this.machineAccess(cloud.kind, ownerOf(identity));
    return access?.allowed ? access.roots.join('\n') : '';
  }

  private toRecord(row: CloudRow): CloudRecord {
    return {
      id: row.id,
      cloudId: row.cloud_id,
      kind: row.kind,
      cloudAccount: row.cloud_account,
      alias: row.alias,
      space: row.space,
      usedSpace: row.used_space,
      status: row.status === 1 ? 'authorized' : 'expired',
      sort: row.sort,
      flags: kindInfo(row.kind)?.flags ?? 0,
      owner: row.user_id !== null ? { userId: row.user_id } : { visitorId: row.visitor_id ?? '' },
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastUsedAt: row.last_used_at,
    };
  }

  /** The API shape of a cloud. */
  toCloud(record: CloudRecord): Cloud {
    const info = kindInfo(record.kind);
    const temporary = 'visitorId' in record.owner;
    return {
      id: record.id,
      cloud_id: record.cloudId,
      cloud_name: record.kind,
      cloud_account: record.cloudAccount,
      cloud_alias_name: record.alias,
      type: temporary ? CloudType.temporary : CloudType.account,
      space: record.space,
      used_space: record.usedSpace,
      status: record.status,
      flags: record.flags,
      sort: record.sort,
      created_at: record.createdAt,
      last_used_at: record.lastUsedAt,
      shared: info?.shared ?? false,
      photos: info?.photos ?? false,
      bound: !temporary,
    };
  }

  /** A cloud the caller owns; 404 "not found" otherwise (another owner's cloud looks missing). */
  async get(identity: CloudIdentity, id: string): Promise<CloudRecord> {
    const row = await this.repo.find(ownerOf(identity), id);
    if (!row) throw errors.notFound();
    return this.toRecord(row);
  }

  /** The owner's clouds in their order; rows of unknown kinds or with illegal names are left out. */
  async listOwned(identity: CloudIdentity): Promise<CloudRecord[]> {
    const owner = ownerOf(identity);
    const cutoff = this.now() - LIMITS.tempCloudExpiryDays * 86_400_000;
    return (await this.repo.list(owner))
      .filter((row) => kindInfo(row.kind) !== undefined && !aliasProblem(row.alias))
      .filter((row) => row.user_id !== null || row.last_used_at >= cutoff)
      .map((row) => this.toRecord(row));
  }

  /** GET /api/v2/clouds/me: the user's clouds and the visitor's temporary ones. */
  async me(user: { userId: string } | undefined, visitor: { visitorId: string } | undefined): Promise<CloudsMeData> {
    const clouds = user ? await this.listOwned(user) : [];
    const temp = visitor ? await this.listOwned(visitor) : [];
    return { clouds: clouds.map((c) => this.toCloud(c)), temp_clouds: temp.map((c) => this.toCloud(c)) };
  }

  private async limitFor(owner: CloudOwner): Promise<{ max: number; key: MessageKey }> {
    if ('userId' in owner) {
      const limit = await this.users.cloudLimit(owner.userId);
      return { max: limit, key: limit < LIMITS.maxCloudDrives ? 'cloud_free_limit_reached' : 'cloud_limit_reached' };
    }
    // Visitors are free users when billing is on.
    return this.users.billingMode === 'off'
      ? { max: LIMITS.maxCloudDrives, key: 'cloud_limit_reached' }
      : { max: LIMITS.freeCloudDrives, key: 'cloud_free_limit_reached' };
  }

  private providerContext(
    id: string | undefined,
    state: Record<string, unknown>,
    machine: LocalAccess | undefined,
  ): ProviderContext {
    // Every kind gets the guard; those reached by an address the user gave connect through it.
    const ctx: ProviderContext = { localRoots: [], state, outbound: this.outbound };
    if (machine?.allowed) {
      ctx.localRoots = machine.roots;
      ctx.localProtected = machine.protectedPaths;
    }
    if (this.cloudTimeoutMs !== undefined) ctx.timeoutMs = this.cloudTimeoutMs;
    ctx.saveState = async (next) => {
      Object.assign(state, next);
      if (!id) return;
      const sealed = this.box.sealJson(state, aadOf(id, 'state'));
      await this.repo.updateById(id, { state_enc: sealed.ciphertext, updated_at: this.now() });
    };
    return ctx;
  }

  /** Turns a failure to reach or sign in to the service into the API's answer. */
  private connectError(kind: string, credentials: Credentials, err: unknown, roots: readonly string[]): ApiError {
    if (err instanceof ApiError) return err;
    const info = kindInfo(kind);
    const pe = toProviderError(err);
    const reason = scrub(pe.message, credentials, info);
    switch (pe.code) {
      case 'auth_invalid':
      case 'auth_expired':
      case 'permission':
      case 'not_found':
      case 'not_dir':
        if (OBJECT_STORAGE_KINDS.has(kind))
          return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'cloud_credentials_invalid');
        if (kind === 'local') {
          return pe.code === 'permission'
            ? new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'local_path_not_allowed', {
                roots: roots.join(', ') || '-',
              })
            : new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'path_not_exist');
        }
        return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'cloud_login_invalid');
      case 'invalid_name':
        return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'cloud_connect_failed', { reason });
      case 'host_key_changed':
        if (kind === 'ftp') {
          // A pinned FTPS certificate that does not match: name the one the server presented.
          const hex = (/SHA-256 ([0-9A-F:]+)/i.exec(pe.message)?.[1] ?? '').replace(/:/g, '').toUpperCase();
          // Shown as openssl and browsers print it (AB:CD:...), to compare with the server's own.
          const presented = hex.match(/../g)?.join(':') ?? '?';
          return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'tls_fingerprint_mismatch', {
            host: String(credentials.host ?? ''),
            fingerprint: presented,
          });
        }
        return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'host_key_changed', {
          host: String(credentials.host ?? ''),
        });
      case 'transaction_cap':
        return new ApiError(Code.TRANSACTION_CAP, 'transaction_cap');
      case 'address_not_allowed':
        return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'cloud_address_not_allowed');
      case 'network':
        if (kind === 'ftp' && isUntrustedCertificate(err)) {
          return new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'tls_certificate_untrusted', {
            host: String(credentials.host ?? ''),
          });
        }
        return new ApiError(Code.CLOUD_UNAVAILABLE, 'cloud_unreachable');
      case 'rate_limited':
      case 'server':
        return new ApiError(Code.CLOUD_UNAVAILABLE, 'cloud_unreachable');
      default:
        return new ApiError(Code.CLOUD_OPERATION_ERROR, 'cloud_connect_failed', { reason });
    }
  }

  /** Opens the service with the credentials and makes one real call; answers the space when known. */
  private async verify(
    kind: string,
    credentials: Credentials,
    state: Record<string, unknown>,
    owner: CloudOwner,
  ): Promise<{ space?: number; used?: number }> {
    const machine = await this.machineAccess(kind, owner);
    let provider: Provider | undefined;
    try {
      provider = await openProvider(kind, credentials, this.providerContext(undefined, state, machine));
      if (provider.about) {
        const about = await provider.about();
        return { space: about.total, used: about.used };
      }
      await provider.list('/', { pageSize: 1 });
      return {};
    } catch (err) {
      const apiError = this.connectError(kind, credentials, err, machine?.allowed ? machine.roots : []);
      this.log.info(
        { kind, code: apiError.code, providerCode: toProviderError(err).code },
        'cloud verification failed',
      );
      throw apiError;
    } finally {
      await provider?.close?.().catch(() => undefined);
    }
  }

  /**
   * Connects a cloud: checks the kind and limits, verifies the credentials against the service,
   * and stores them encrypted. `trusted` callers (the OAuth flow) pass credentials the server
   * obtained itself, for OAuth kinds; `cloudAccount` and `cloudId` name the account then.
   */
  async connect(
    identity: CloudIdentity,
    input: { kind: string; alias?: string; credentials: Record<string, unknown> },
    options: { trusted?: boolean; cloudAccount?: string; cloudId?: string } = {},
  ): Promise<CloudRecord> {
    const info = kindInfo(input.kind);
    if (!info) throw errors.badRequest('cloud_kind_unknown', { kind: input.kind.slice(0, 64) });
    const { available, reason } = this.availability(info.kind);
    if (!available) throw errors.badRequest('cloud_kind_unavailable', { kind: info.displayName, reason: reason ?? '' });
    // Before anything else: a visitor or a user not allowed learns nothing about the server's disk.
    await this.machineAccess(info.kind, ownerOf(identity));
    if (info.auth === 'oauth' && !options.trusted)
      throw errors.badRequest('cloud_oauth_only', { kind: info.displayName });
    const alias = (input.alias ?? '').trim();
    if (aliasProblem(alias)) throw errors.badRequest('field_invalid', { field: 'alias' });
    const credentials =
      info.auth === 'form' ? normalizeCredentials(info, input.credentials) : (input.credentials as Credentials);
    const owner = ownerOf(identity);
    const cloudId = options.cloudId ?? cloudIdOf(info.kind, credentials);
    if (await this.repo.findByCloudId(owner, cloudId)) {
      throw new ApiError(Code.CLOUD_ALREADY_BOUND, 'cloud_already_bound');
    }
    const limit = await this.limitFor(owner);
    if ((await this.repo.count(owner)) >= limit.max) {
      throw new ApiError(Code.CLOUD_LIMIT_REACHED, limit.key, { max: limit.max });
    }
    const state: Record<string, unknown> = {};
    const space = await this.verify(info.kind, credentials, state, owner);
    const id = newId();
    const now = this.now();
    const sealed = this.box.sealJson(credentials, aadOf(id, 'credentials'));
    const row: CloudRow = {
      id,
      user_id: 'userId' in owner ? owner.userId : null,
      visitor_id: 'visitorId' in owner ? owner.visitorId : null,
      kind: info.kind,
      cloud_id: cloudId,
      cloud_account: options.cloudAccount ?? cloudAccountOf(info.kind, credentials),
      alias,
      space: space.space ?? 0,
      used_space: space.used ?? 0,
      status: 1,
      sort: (await this.repo.maxSort(owner)) + 1,
      credentials_enc: sealed.ciphertext,
      state_enc: Object.keys(state).length > 0 ? this.box.sealJson(state, aadOf(id, 'state')).ciphertext : null,
      key_version: sealed.keyVersion,
      created_at: now,
      updated_at: now,
      last_used_at: now,
    };
    await this.repo.insert(row);
    this.log.info({ cloud: id, kind: info.kind }, 'cloud connected');
    return this.toRecord(row);
  }

  /** Reauthorises a cloud with new credentials (verified); its alias, order and tasks stay. */
  async reauthorize(
    identity: CloudIdentity,
    id: string,
    rawCredentials: Record<string, unknown>,
    options: { trusted?: boolean } = {},
  ): Promise<CloudRecord> {
    const owner = ownerOf(identity);
    const row = await this.repo.find(owner, id);
    if (!row) throw errors.notFound();
    const info = kindInfo(row.kind);
    if (!info) throw errors.badRequest('cloud_kind_unknown', { kind: row.kind });
    await this.machineAccess(info.kind, owner);
    if (info.auth === 'oauth' && !options.trusted)
      throw errors.badRequest('cloud_oauth_only', { kind: info.displayName });
    const credentials =
      info.auth === 'form' ? normalizeCredentials(info, rawCredentials) : (rawCredentials as Credentials);
    if (info.auth === 'form' && cloudIdOf(info.kind, credentials) !== row.cloud_id) {
      // Another bucket, server or folder is another cloud, not a reauthorisation of this one.
      throw errors.badRequest('cloud_reauthorize_other');
    }
    const state = this.readState(row);
    const space = await this.verify(info.kind, credentials, state, owner);
    const now = this.now();
    const sealed = this.box.sealJson(credentials, aadOf(id, 'credentials'));
    const patch: CloudPatch = {
      status: 1,
      credentials_enc: sealed.ciphertext,
      key_version: sealed.keyVersion,
      state_enc: Object.keys(state).length > 0 ? this.box.sealJson(state, aadOf(id, 'state')).ciphertext : null,
      updated_at: now,
      last_used_at: now,
    };
    if (space.space !== undefined) patch.space = space.space;
    if (space.used !== undefined) patch.used_space = space.used;
    if (!(await this.repo.update(owner, id, patch))) throw errors.notFound();
    return this.get(identity, id);
  }

  /** PUT /api/clouds/{id}: the reported space and the alias. */
  async update(
    identity: CloudIdentity,
    id: string,
    patch: { space?: number; used_space?: number; alias?: string },
  ): Promise<CloudRecord> {
    const set: CloudPatch = { updated_at: this.now() };
    if (patch.space !== undefined || patch.used_space !== undefined) {
      // Used space above a known total is a contradiction, whichever of the two this call changes.
      const current = await this.get(identity, id);
      const space = patch.space ?? current.space;
      if (space > 0 && (patch.used_space ?? current.usedSpace) > space) {
        throw errors.badRequest('field_invalid', { field: 'used_space' });
      }
    }
    if (patch.space !== undefined) set.space = Math.floor(patch.space);
    if (patch.used_space !== undefined) set.used_space = Math.floor(patch.used_space);
    if (patch.alias !== undefined) {
      const alias = patch.alias.trim();
      if (aliasProblem(alias)) throw errors.badRequest('field_invalid', { field: 'alias' });
      set.alias = alias;
    }
    if (!(await this.repo.update(ownerOf(identity), id, set))) throw errors.notFound();
    return this.get(identity, id);
  }

  async remove(identity: CloudIdentity, id: string): Promise<void> {
    if (!(await this.repo.delete(ownerOf(identity), id))) throw errors.notFound();
    this.log.info({ cloud: id }, 'cloud removed');
  }

  /** PUT /api/clouds/sort: `sortVal` is a JSON array of the caller's cloud ids in the new order. */
  async sort(identity: CloudIdentity, sortVal: string): Promise<void> {
    let ids: unknown;
    try {
      ids = JSON.parse(sortVal);
    } catch {
      throw errors.badRequest('field_invalid', { field: 'sort_val' });
    }
    if (!Array.isArray(ids) || ids.length > 1000 || !ids.every((v) => typeof v === 'string' || typeof v === 'number')) {
      throw errors.badRequest('field_invalid', { field: 'sort_val' });
    }
    const wanted = ids.map(String);
    // Each cloud has one place: an id listed twice leaves its place unclear.
    if (new Set(wanted).size !== wanted.length) throw errors.badRequest('field_invalid', { field: 'sort_val' });
    const owner = ownerOf(identity);
    const owned = await this.repo.list(owner);
    const ownedIds = new Set(owned.map((r) => r.id));
    if (wanted.some((id) => !ownedIds.has(id))) throw errors.notFound();
    // Clouds left out keep their relative order after the listed ones.
    const rest = owned.map((r) => r.id).filter((id) => !wanted.includes(id));
    await this.repo.setOrder(owner, [...wanted, ...rest], this.now());
  }

  /**
   * POST /api/clouds/bind: moves up to 5 of the named temporary clouds (the most recently used
   * first, within the account's limit, skipping ones the account already has) to the account, and
   * discards the visitor's others.
   */
  async bind(
    user: { userId: string },
    visitor: { visitorId: string } | undefined,
    relationId: string,
    proof: { signedInHere: boolean },
  ): Promise<{ bound: string[]; discarded: string[] }> {
    const requested = new Set(
      relationId
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    if (!visitor) {
      if (requested.size > 0) throw errors.notFound();
      return { bound: [], discarded: [] };
    }
    const temp = await this.repo.list({ visitorId: visitor.visitorId });
    const tempIds = new Set(temp.map((r) => r.id));
    if ([...requested].some((id) => !tempIds.has(id))) throw errors.notFound();
    // Only into the account this browser just signed in to (a forged sign-in link gives no proof).
    if (!proof.signedInHere) throw errors.bindRequiresSignIn();
    const owner = { userId: user.userId };
    const have = new Set((await this.repo.list(owner)).map((r) => r.cloud_id));
    const limit = await this.limitFor(owner);
    const room = Math.max(0, Math.min(LIMITS.tempCloudsBoundOnLogin, limit.max - (await this.repo.count(owner))));
    const chosen: string[] = [];
    const candidates = temp
      .filter((r) => requested.has(r.id))
      .sort((a, b) => b.last_used_at - a.last_used_at || b.created_at - a.created_at);
    for (const row of candidates) {
      if (chosen.length >= room) break;
      if (have.has(row.cloud_id)) continue;
      have.add(row.cloud_id);
      chosen.push(row.id);
    }
    const firstSort = (await this.repo.maxSort(owner)) + 1;
    const result = await this.repo.bindToUser(visitor.visitorId, user.userId, chosen, firstSort, this.now());
    this.log.info({ bound: result.bound.length, discarded: result.discarded.length }, 'temporary clouds bound');
    return result;
  }

  private readCredentials(row: CloudRow): Credentials {
    return this.box.openJson<Credentials>(row.credentials_enc, aadOf(row.id, 'credentials'), row.key_version);
  }

  private readState(row: CloudRow): Record<string, unknown> {
    return row.state_enc ? this.box.openJson<Record<string, unknown>>(row.state_enc, aadOf(row.id, 'state')) : {};
  }

  /**
   * Opens a cloud the caller owns, for file calls, tasks and scans: the only place credentials are
   * decrypted. An expired cloud answers 401 "Authorization has expired, please reauthorize.", and so
   * does one whose service refuses its credentials while opening (a password changed on the
   * server): that cloud is marked expired. A local folder whose owner may no longer use local
   * folders answers 403004. Other failures to open pass through as ProviderErrors.
   */
  async open(
    identity: CloudIdentity,
    id: string,
    opts: { touch?: boolean } = {},
  ): Promise<{ cloud: CloudRecord; provider: Provider }> {
    const owner = ownerOf(identity);
    const row = await this.repo.find(owner, id);
    if (!row) throw errors.notFound();
    const cloud = this.toRecord(row);
    if (row.status !== 1) throw errors.cloudAuthExpired({ cloud_id: id });
    const machine = await this.machineAccess(row.kind, owner);
    let provider: Provider;
    try {
      provider = await openProvider(
        row.kind,
        this.readCredentials(row),
        this.providerContext(id, this.readState(row), machine),
      );
    } catch (err) {
      // A folder outside what the owner may use now (their grant changed, or the roots did).
      if (machine?.allowed && toProviderError(err).code === 'permission') {
        throw new ApiError(Code.LOCAL_FOLDER_FORBIDDEN, 'local_path_not_allowed', { roots: machine.roots.join(', ') });
      }
      if (refusesCredentials(err)) {
        await this.markExpired(id);
        throw errors.cloudAuthExpired({ cloud_id: id });
      }
      throw err;
    }
    // Opened for the app's own reads (touch false): not a use that keeps a temporary cloud.
    if (opts.touch !== false) await this.touch(id);
    return { cloud, provider };
  }

  /** Marks a cloud's authorisation expired (the service rejected its credentials); it is not deleted. */
  async markExpired(cloudId: string): Promise<void> {
    await this.repo.updateById(cloudId, { status: 0, updated_at: this.now() });
    this.log.info({ cloud: cloudId }, 'cloud authorisation expired');
  }

  /** Records that a cloud was used now (temporary clouds expire after 30 days unused). */
  async touch(cloudId: string): Promise<void> {
    await this.repo.updateById(cloudId, { last_used_at: this.now() });
  }

  /** Stores space figures a worker learned (cloud-manager/info). */
  async recordSpace(cloudId: string, space: number, usedSpace: number): Promise<void> {
    await this.repo.updateById(cloudId, { space, used_space: usedSpace, updated_at: this.now() });
  }

  /** Deletes visitors' temporary clouds unused for 30 days. */
  async purgeUnusedTemporary(): Promise<number> {
    return this.repo.purgeUnusedTemporary(this.now() - LIMITS.tempCloudExpiryDays * 86_400_000);
  }
}
