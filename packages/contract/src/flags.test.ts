import { describe, expect, it } from 'vitest';
import {
  ALL_CLOUD_FLAGS,
  CLOUD_KINDS,
  CLOUD_KIND_INFO,
  CloudFlag,
  Permission,
  READ_ONLY_CLOUD_FLAGS,
  canMkdir,
  canRead,
  canSlim,
  canTransferIn,
  canWrite,
  cloudFlagsOf,
  hasFlag,
  hasUsageDetail,
  isCloudKind,
} from './index.ts';

describe('folder permission bits (spec section 3)', () => {
  it('has the values of the spec', () => {
    expect(Permission).toEqual({ none: 0, read: 1, write: 2, readWrite: 3, delete: 4, mkdir: 8, rename: 16, all: -1 });
  });
  it('composes read-write from read and write', () => {
    expect(Permission.readWrite).toBe(Permission.read | Permission.write);
  });
  it('uses one distinct bit per permission', () => {
    const bits = [Permission.read, Permission.write, Permission.delete, Permission.mkdir, Permission.rename];
    for (const bit of bits) expect(Math.log2(bit) % 1).toBe(0);
    expect(bits.reduce((a, b) => a | b, 0)).toBe(31);
  });
  it('adds slim 256, using-detail 512 and transfer-in 1024 for clouds', () => {
    expect(CloudFlag).toEqual({ slim: 256, usingDetail: 512, transferIn: 1024 });
  });
});

describe('hasFlag', () => {
  it('finds a single bit and not its neighbours', () => {
    expect(hasFlag(Permission.read, Permission.read)).toBe(true);
    expect(hasFlag(Permission.read, Permission.write)).toBe(false);
    expect(hasFlag(Permission.write | Permission.mkdir, Permission.mkdir)).toBe(true);
    expect(hasFlag(Permission.write | Permission.mkdir, Permission.delete)).toBe(false);
    expect(hasFlag(Permission.rename, Permission.rename)).toBe(true);
  });
  it('needs every bit of a composed flag', () => {
    expect(hasFlag(Permission.readWrite, Permission.readWrite)).toBe(true);
    expect(hasFlag(Permission.read, Permission.readWrite)).toBe(false);
    expect(hasFlag(Permission.write, Permission.readWrite)).toBe(false);
  });
  it('treats all (-1) as every bit set', () => {
    for (const flag of [1, 2, 3, 4, 8, 16, 256, 512, 1024]) expect(hasFlag(Permission.all, flag)).toBe(true);
    expect(canTransferIn(Permission.all)).toBe(true);
  });
  it('grants nothing from none (0) except the empty flag', () => {
    for (const flag of [1, 2, 3, 4, 8, 16, 256, 512, 1024, -1]) expect(hasFlag(Permission.none, flag)).toBe(false);
    expect(hasFlag(Permission.none, Permission.none)).toBe(true);
  });
  it('asks for all only of all', () => {
    expect(hasFlag(ALL_CLOUD_FLAGS, Permission.all)).toBe(false);
    expect(hasFlag(Permission.all, Permission.all)).toBe(true);
  });
});

describe('transfer-in', () => {
  it('is valid only together with write', () => {
    expect(canTransferIn(CloudFlag.transferIn)).toBe(false);
    expect(canTransferIn(CloudFlag.transferIn | Permission.read)).toBe(false);
    expect(canTransferIn(CloudFlag.transferIn | Permission.write)).toBe(true);
    expect(canTransferIn(CloudFlag.transferIn | Permission.readWrite)).toBe(true);
    expect(hasFlag(CloudFlag.transferIn | Permission.read, CloudFlag.transferIn)).toBe(false);
  });
  it('is not implied by write alone', () => {
    expect(canTransferIn(Permission.write)).toBe(false);
    expect(canTransferIn(Permission.readWrite | Permission.mkdir)).toBe(false);
  });
});

describe('capability shortcuts', () => {
  it('read each bit', () => {
    const flags = Permission.read | CloudFlag.slim;
    expect(canRead(flags)).toBe(true);
    expect(canWrite(flags)).toBe(false);
    expect(canMkdir(flags)).toBe(false);
    expect(canSlim(flags)).toBe(true);
    expect(hasUsageDetail(flags)).toBe(false);
    expect(hasUsageDetail(CloudFlag.usingDetail)).toBe(true);
    expect(canMkdir(Permission.mkdir)).toBe(true);
    expect(canWrite(Permission.readWrite)).toBe(true);
  });
  it('"all capabilities" is every permission and cloud bit', () => {
    expect(ALL_CLOUD_FLAGS).toBe(1 | 2 | 4 | 8 | 16 | 256 | 512 | 1024);
    expect(READ_ONLY_CLOUD_FLAGS & Permission.write).toBe(0);
    expect(canRead(READ_ONLY_CLOUD_FLAGS)).toBe(true);
  });
});

/** What each kind's adapter supports (DECISIONS "Cloud kinds" over spec section 3). */
const ALL = { read: true, write: true, mkdir: true, slim: true, usage: true, transferIn: true };
const READ_ONLY = { read: true, write: false, mkdir: false, slim: false, usage: true, transferIn: false };
const EXPECTED: Record<string, typeof ALL> = {
  google_drive: ALL,
  google_drive_shared: READ_ONLY,
  onedrive: ALL,
  onedrive_business: ALL,
  dropbox: ALL,
  dropbox_business: ALL,
  box: ALL,
  google_photos: { read: true, write: true, mkdir: true, slim: false, usage: false, transferIn: true },
  amazon_s3: ALL,
  wasabi: ALL,
  backblaze_b2: ALL,
  s3_compatible: { ...ALL, usage: false },
  webdav: ALL,
  sftp: ALL,
  ftp: ALL,
  local: ALL,
};

describe('cloud kinds', () => {
  it('are the kinds of DECISIONS, each described once', () => {
    expect([...CLOUD_KINDS].sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const kind of CLOUD_KINDS) {
      expect(CLOUD_KIND_INFO[kind].kind).toBe(kind);
      expect(isCloudKind(kind)).toBe(true);
    }
  });

  it.each(Object.entries(EXPECTED))('%s has the capabilities its adapter supports', (kind, expected) => {
    const flags = cloudFlagsOf(kind);
    expect({
      read: canRead(flags),
      write: canWrite(flags),
      mkdir: canMkdir(flags),
      slim: canSlim(flags),
      usage: hasUsageDetail(flags),
      transferIn: canTransferIn(flags),
    }).toEqual(expected);
    expect(flags).toBe(CLOUD_KIND_INFO[kind as keyof typeof CLOUD_KIND_INFO].flags);
  });

  it('gives "all capabilities" kinds exactly every bit', () => {
    for (const [kind, expected] of Object.entries(EXPECTED)) {
      if (expected === ALL) expect(cloudFlagsOf(kind), kind).toBe(ALL_CLOUD_FLAGS);
    }
  });

  it('never sets transfer-in without write', () => {
    for (const kind of CLOUD_KINDS) {
      const flags = cloudFlagsOf(kind);
      if (flags & CloudFlag.transferIn) expect(canWrite(flags), kind).toBe(true);
    }
  });

  it('gives an unknown kind no capabilities', () => {
    for (const kind of ['', 'flickr', 'GOOGLE_DRIVE', 'toString', '__proto__', 'constructor']) {
      expect(cloudFlagsOf(kind), kind).toBe(Permission.none);
      expect(isCloudKind(kind)).toBe(false);
    }
  });

  it('marks the photos kind and the shared variant', () => {
    const photos = CLOUD_KINDS.filter((k) => CLOUD_KIND_INFO[k].photos);
    const shared = CLOUD_KINDS.filter((k) => CLOUD_KIND_INFO[k].shared);
    expect(photos).toEqual(['google_photos']);
    expect(shared).toEqual(['google_drive_shared']);
  });

  it('authorises object storage with Bucket Name, Access Key ID and Secret Access Key', () => {
    for (const kind of ['amazon_s3', 'wasabi', 'backblaze_b2', 's3_compatible'] as const) {
      const info = CLOUD_KIND_INFO[kind];
      expect(info.auth).toBe('form');
      const required = info.fields.filter((f) => f.required).map((f) => f.label);
      expect(required).toEqual(expect.arrayContaining(['Bucket Name', 'Access Key ID', 'Secret Access Key']));
      expect(info.fields.find((f) => f.name === 'secret_access_key')?.secret).toBe(true);
    }
    expect(CLOUD_KIND_INFO.s3_compatible.fields.find((f) => f.name === 'endpoint')?.required).toBe(true);
  });

  it('offers every credential the protocol backends read, the optional settings neither required nor secret', () => {
    const names = (kind: 'ftp' | 'sftp' | 'webdav') => CLOUD_KIND_INFO[kind].fields.map((f) => f.name);
    expect(names('ftp')).toEqual([
      'host',
      'port',
      'username',
      'password',
      'secure',
      'tls_fingerprint',
      'insecure_skip_verify',
      'root',
    ]);
    expect(names('sftp')).toEqual(['host', 'port', 'username', 'password', 'private_key', 'passphrase', 'root']);
    expect(names('webdav')).toEqual(['url', 'username', 'password', 'vendor', 'insecure_skip_verify']);
    const optional = [
      ['ftp', 'tls_fingerprint'],
      ['ftp', 'insecure_skip_verify'],
      ['ftp', 'root'],
      ['sftp', 'root'],
      ['webdav', 'vendor'],
      ['webdav', 'insecure_skip_verify'],
    ] as const;
    for (const [kind, name] of optional) {
      const field = CLOUD_KIND_INFO[kind].fields.find((f) => f.name === name);
      expect(field, `${kind}.${name}`).toMatchObject({ required: false, secret: false });
      expect(field?.label.length, `${kind}.${name}`).toBeGreaterThan(0);
    }
    // The unsafe switch says so, in its label and its hint.
    const unsafe = CLOUD_KIND_INFO.ftp.fields.find((f) => f.name === 'insecure_skip_verify');
    expect(unsafe).toMatchObject({ type: 'boolean' });
    expect(unsafe?.label).toMatch(/unsafe/i);
    expect(unsafe?.hint).toMatch(/testing only/i);
    // WebDAV's server type: the values the backend understands, detection first (the default).
    const vendor = CLOUD_KIND_INFO.webdav.fields.find((f) => f.name === 'vendor');
    expect(vendor?.type).toBe('select');
    expect(vendor?.options?.map((o) => o.value)).toEqual(['auto', 'nextcloud', 'owncloud', 'other']);
    // The fingerprint pattern takes what openssl and Node print, and nothing shorter.
    const pattern = new RegExp(
      CLOUD_KIND_INFO.ftp.fields.find((f) => f.name === 'tls_fingerprint')?.pattern ?? '',
      'i',
    );
    expect(pattern.test(`${'AB:'.repeat(31)}CD`)).toBe(true);
    expect(pattern.test('ab'.repeat(32))).toBe(true);
    expect(pattern.test(`sha256:${'ab'.repeat(32)}`)).toBe(true);
    expect(pattern.test('ab'.repeat(31))).toBe(false);
    expect(pattern.test('xy'.repeat(32))).toBe(false);
  });

  it('gives every select field its options', () => {
    for (const kind of CLOUD_KINDS) {
      for (const field of CLOUD_KIND_INFO[kind].fields) {
        if (field.type === 'select') expect(field.options?.length, `${kind}.${field.name}`).toBeGreaterThan(1);
        else expect(field.options, `${kind}.${field.name}`).toBeUndefined();
      }
    }
  });

  it('names an OAuth provider for every OAuth kind and marks every password-like field secret', () => {
    for (const kind of CLOUD_KINDS) {
      const info = CLOUD_KIND_INFO[kind];
      if (info.auth === 'oauth') {
        expect(info.oauthProvider, kind).toBeDefined();
        expect(info.fields).toEqual([]);
      } else {
        expect(info.fields.length, kind).toBeGreaterThan(0);
      }
      for (const field of info.fields) {
        if (field.type === 'password') expect(field.secret, `${kind}.${field.name}`).toBe(true);
      }
      expect(new Set(info.fields.map((f) => f.name)).size).toBe(info.fields.length);
    }
  });
});
