import { describe, expect, it } from 'vitest';
import { CLOUD_KIND_INFO } from '@skyferry/contract';
import { ApiError } from '../http/errors.ts';
import { cloudAccountOf, cloudIdOf, normalizeCredentials } from './clouds.ts';

function messageKey(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.key;
    throw err;
  }
  return undefined;
}

describe('normalizeCredentials', () => {
  it('checks object-storage fields in the spec order', () => {
    const s3 = CLOUD_KIND_INFO.amazon_s3;
    expect(messageKey(() => normalizeCredentials(s3, {}))).toBe('bucket_empty');
    expect(messageKey(() => normalizeCredentials(s3, { bucket: 'b' }))).toBe('access_key_empty');
    expect(
      messageKey(() => normalizeCredentials(s3, { bucket: 'b', access_key_id: 'k', secret_access_key: ' ' })),
    ).toBe('secret_key_empty');
    expect(
      normalizeCredentials(s3, {
        bucket: ' b ',
        access_key_id: 'k',
        secret_access_key: ' keep spaces ',
        path_style: 'true',
        unknown: 'dropped',
      }),
    ).toEqual({ bucket: 'b', access_key_id: 'k', secret_access_key: ' keep spaces ', path_style: true });
  });

  it('requires the fields a kind marks required, and checks numbers, booleans and URLs', () => {
    const sftp = CLOUD_KIND_INFO.sftp;
    expect(messageKey(() => normalizeCredentials(sftp, { username: 'u' }))).toBe('field_required');
    expect(normalizeCredentials(sftp, { host: 'h', username: 'u', port: '2222' })).toEqual({
      host: 'h',
      username: 'u',
      port: 2222,
    });
    expect(messageKey(() => normalizeCredentials(sftp, { host: 'h', username: 'u', port: '22x' }))).toBe(
      'field_invalid',
    );
    expect(messageKey(() => normalizeCredentials(sftp, { host: 'h', username: 'u', port: 0 }))).toBe('field_invalid');
    const ftp = CLOUD_KIND_INFO.ftp;
    expect(
      messageKey(() => normalizeCredentials(ftp, { host: 'h', username: 'u', password: 'p', secure: 'maybe' })),
    ).toBe('field_invalid');
    const dav = CLOUD_KIND_INFO.webdav;
    expect(messageKey(() => normalizeCredentials(dav, { url: 'file:///etc' }))).toBe('field_invalid');
    expect(messageKey(() => normalizeCredentials(dav, { url: 'not a url' }))).toBe('field_invalid');
    expect(normalizeCredentials(dav, { url: ' https://dav.example/remote.php/dav ' })).toEqual({
      url: 'https://dav.example/remote.php/dav',
    });
  });

  it('keeps the optional protocol settings the backends read: FTP pin, unsafe switch and root; SFTP root; WebDAV server type', () => {
    const fp = 'ab:'.repeat(31) + 'AB';
    expect(
      normalizeCredentials(CLOUD_KIND_INFO.ftp, {
        host: 'h',
        username: 'u',
        password: 'p',
        secure: true,
        tls_fingerprint: ` ${fp} `,
        insecure_skip_verify: 'false',
        root: ' /srv/ftp ',
        unknown: 'dropped',
      }),
    ).toEqual({
      host: 'h',
      username: 'u',
      password: 'p',
      secure: true,
      tls_fingerprint: fp,
      insecure_skip_verify: false,
      root: '/srv/ftp',
    });
    // A fingerprint is 32 hex bytes (colons and a "sha256:" prefix allowed).
    expect(
      normalizeCredentials(CLOUD_KIND_INFO.ftp, {
        host: 'h',
        username: 'u',
        password: 'p',
        tls_fingerprint: `SHA256:${'0f'.repeat(32)}`,
      }).tls_fingerprint,
    ).toBe(`SHA256:${'0f'.repeat(32)}`);
    for (const bad of ['AB'.repeat(31), 'zz'.repeat(32), 'not a fingerprint']) {
      expect(
        messageKey(() =>
          normalizeCredentials(CLOUD_KIND_INFO.ftp, { host: 'h', username: 'u', password: 'p', tls_fingerprint: bad }),
        ),
        bad,
      ).toBe('field_invalid');
    }
    expect(normalizeCredentials(CLOUD_KIND_INFO.sftp, { host: 'h', username: 'u', root: 'data/in' })).toEqual({
      host: 'h',
      username: 'u',
      root: 'data/in',
    });
    const dav = CLOUD_KIND_INFO.webdav;
    for (const vendor of ['auto', 'nextcloud', 'owncloud', 'other']) {
      expect(normalizeCredentials(dav, { url: 'https://d.example/', vendor }).vendor).toBe(vendor);
    }
    expect(messageKey(() => normalizeCredentials(dav, { url: 'https://d.example/', vendor: 'sharepoint' }))).toBe(
      'field_invalid',
    );
    expect(messageKey(() => normalizeCredentials(dav, { url: 'https://d.example/', vendor: true }))).toBe(
      'field_invalid',
    );
    expect(normalizeCredentials(dav, { url: 'https://d.example/', insecure_skip_verify: true })).toEqual({
      url: 'https://d.example/',
      insecure_skip_verify: true,
    });
  });
});

describe('cloud identity and account', () => {
  it('is the same for the same store whatever the secret or letter case; different for another store', () => {
    const a = cloudIdOf('amazon_s3', { bucket: 'Photos', access_key_id: 'k1', secret_access_key: 's1' });
    expect(cloudIdOf('amazon_s3', { bucket: 'photos', access_key_id: 'k2', secret_access_key: 's2' })).toBe(a);
    expect(cloudIdOf('amazon_s3', { bucket: 'videos', access_key_id: 'k1', secret_access_key: 's1' })).not.toBe(a);
    expect(cloudIdOf('wasabi', { bucket: 'photos' })).not.toBe(a);
    expect(cloudIdOf('local', { path: '/srv/a/' })).toBe(cloudIdOf('local', { path: '/srv/a' }));
  });

  it('counts a server root only when one is set: another folder is another cloud, older clouds keep their id', () => {
    const login = { host: 'h', port: 21, username: 'u', password: 'p' };
    const plain = cloudIdOf('ftp', login);
    // The id before the root setting existed (host, port, user only) stays the same.
    expect(cloudIdOf('ftp', { ...login, root: '' })).toBe(plain);
    expect(cloudIdOf('ftp', { ...login, root: '/srv/a' })).not.toBe(plain);
    expect(cloudIdOf('ftp', { ...login, root: '/srv/a/' })).toBe(cloudIdOf('ftp', { ...login, root: '/srv/a' }));
    expect(cloudIdOf('ftp', { ...login, root: '/srv/b' })).not.toBe(cloudIdOf('ftp', { ...login, root: '/srv/a' }));
    expect(cloudIdOf('sftp', { ...login, root: '/' })).not.toBe(cloudIdOf('sftp', login));
    // Settings that do not change the store do not change the identity.
    expect(cloudIdOf('ftp', { ...login, tls_fingerprint: 'ab'.repeat(32) })).toBe(plain);
  });

  it('shows who or what without secrets', () => {
    expect(
      cloudAccountOf('s3_compatible', { bucket: 'b', endpoint: 'https://minio.example:9000', secret_access_key: 's' }),
    ).toBe('b @ minio.example:9000');
    expect(cloudAccountOf('webdav', { url: 'https://dav.example/x', username: 'ann', password: 'p' })).toBe(
      'ann@dav.example',
    );
    expect(cloudAccountOf('sftp', { host: 'h', port: 2222, username: 'u', password: 'p' })).toBe('u@h:2222');
    expect(cloudAccountOf('ftp', { host: 'h', username: 'u', root: '/srv/ftp' })).toBe('u@h /srv/ftp');
    expect(cloudAccountOf('local', { path: '/srv/files' })).toBe('/srv/files');
  });
});
