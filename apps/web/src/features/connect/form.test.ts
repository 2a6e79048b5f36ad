import { describe, expect, it } from 'vitest';
import { CLOUD_KIND_INFO, type SystemCloudKind } from '@skyferry/contract';
import { credentialsOf, selectValue, validateConnectForm } from './form.ts';

const kind = (name: keyof typeof CLOUD_KIND_INFO): Pick<SystemCloudKind, 'cloud_name' | 'fields'> => ({
  cloud_name: name,
  fields: CLOUD_KIND_INFO[name].fields.map((f) => ({ ...f })),
});

describe('connect form', () => {
  it('object storage: the spec messages in order Bucket Name, Access Key ID, Secret Access Key', () => {
    const s3 = kind('s3_compatible');
    expect(validateConnectForm(s3, {})?.key).toBe('error.bucketEmpty');
    expect(validateConnectForm(s3, { bucket: ' ' })?.key).toBe('error.bucketEmpty');
    expect(validateConnectForm(s3, { bucket: 'b' })?.key).toBe('error.accessKeyEmpty');
    expect(validateConnectForm(s3, { bucket: 'b', access_key_id: 'k' })?.key).toBe('error.secretKeyEmpty');
    expect(validateConnectForm(s3, { bucket: 'b', access_key_id: 'k', secret_access_key: 's' })).toMatchObject({
      field: 'endpoint',
      key: 'error.required',
    });
    expect(
      validateConnectForm(s3, { bucket: 'b', access_key_id: 'k', secret_access_key: 's', endpoint: 'ftp://x' }),
    ).toMatchObject({ field: 'endpoint', key: 'error.url' });
    expect(
      validateConnectForm(s3, { bucket: 'b', access_key_id: 'k', secret_access_key: 's', endpoint: 'https://x' }),
    ).toBeNull();
  });

  it('SFTP: host and user required, the port a number', () => {
    const sftp = kind('sftp');
    expect(validateConnectForm(sftp, { username: 'u' })).toMatchObject({ field: 'host', key: 'error.required' });
    expect(validateConnectForm(sftp, { host: 'h', username: 'u', port: '22a' })).toMatchObject({
      field: 'port',
      key: 'error.invalid',
    });
    expect(credentialsOf(sftp, { host: ' h ', username: 'u', port: '2222', password: ' p ' })).toEqual({
      host: 'h',
      username: 'u',
      port: 2222,
      password: ' p ',
    });
  });

  it('switches go as booleans, blanks are left out', () => {
    expect(credentialsOf(kind('ftp'), { host: 'h', username: 'u', password: 'p', secure: true, port: '' })).toEqual({
      host: 'h',
      username: 'u',
      password: 'p',
      secure: true,
    });
  });

  it('select fields take only their options and show the first by default; text patterns are checked', () => {
    const dav = kind('webdav');
    const vendor = dav.fields.find((f) => f.name === 'vendor')!;
    expect(selectValue(vendor, undefined)).toBe('auto');
    expect(selectValue(vendor, 'owncloud')).toBe('owncloud');
    expect(validateConnectForm(dav, { url: 'https://d.example/', vendor: 'sharepoint' })).toMatchObject({
      field: 'vendor',
      key: 'error.invalid',
    });
    expect(validateConnectForm(dav, { url: 'https://d.example/', vendor: 'other' })).toBeNull();
    // Left at its default, a select is not sent (the server's default applies); a choice is.
    expect(credentialsOf(dav, { url: 'https://d.example/' })).toEqual({ url: 'https://d.example/' });
    expect(credentialsOf(dav, { url: 'https://d.example/', vendor: 'other' })).toEqual({
      url: 'https://d.example/',
      vendor: 'other',
    });
    const ftp = kind('ftp');
    const base = { host: 'h', username: 'u', password: 'p' };
    expect(validateConnectForm(ftp, { ...base, tls_fingerprint: 'AB:CD' })).toMatchObject({
      field: 'tls_fingerprint',
      key: 'error.invalid',
    });
    expect(validateConnectForm(ftp, { ...base, tls_fingerprint: ` ${'AB:'.repeat(31)}CD ` })).toBeNull();
    expect(credentialsOf(ftp, { ...base, tls_fingerprint: ` ${'ab'.repeat(32)} `, root: ' /pub ' })).toEqual({
      ...base,
      tls_fingerprint: 'ab'.repeat(32),
      root: '/pub',
    });
  });
});
