import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { convertRclone, parseRcloneConfig, RcloneConfigError } from './convert.ts';
import { obscure, reveal, RevealError } from './reveal.ts';

const rcloneObscure = (clear: string) => execFileSync('rclone', ['obscure', '--', clear]).toString().trim();
const rcloneReveal = (obscured: string) => execFileSync('rclone', ['reveal', '--', obscured]).toString().trim();

describe("rclone's obscured passwords", () => {
  it.each(['secret', 'pässwörd with spaces', 'x', '"quotes" = and ; # signs', 'a'.repeat(200)])(
    'reveals what rclone obscure made, and rclone reveals what it obscures: %s',
    (clear) => {
      expect(reveal(rcloneObscure(clear))).toBe(clear);
      expect(rcloneReveal(obscure(clear))).toBe(clear);
    },
  );
  it('refuses what rclone could not have made', () => {
    expect(() => reveal('not base64!')).toThrow(RevealError);
    expect(() => reveal('c2hvcnQ')).toThrow(RevealError);
  });
});

const env = {
  username: 'me',
  readKeyFile: (path: string) => {
    if (path === '/keys/id') return 'PRIVATE KEY';
    throw new Error('ENOENT');
  },
};
const convert = (text: string, existing: string[] = []) =>
  convertRclone(parseRcloneConfig(text), env, new Set(existing));

describe('rclone.conf to remotes', () => {
  it('maps S3 providers: AWS, Wasabi, others with their endpoint; keys from the environment with env_auth', () => {
    const r = convert(`
[aws]
type = s3
provider = AWS
access_key_id = AK
secret_access_key = SK
region = eu-west-1

[wasabi]
type = s3
provider = Wasabi
access_key_id = AK
secret_access_key = SK
endpoint = s3.eu-central-1.wasabisys.com

[minio]
type = s3
provider = Minio
access_key_id = AK
secret_access_key = SK
endpoint = http://nas.lan:9000
force_path_style = false

[envs]
type = s3
provider = AWS
env_auth = true

; a comment
# and another
[noend]
type = s3
provider = Ceph
access_key_id = AK
secret_access_key = SK
`);
    expect(r.imported.map((i) => [i.name, i.kind, i.credentials])).toEqual([
      ['aws', 'amazon_s3', { access_key_id: 'AK', secret_access_key: 'SK', region: 'eu-west-1' }],
      [
        'wasabi',
        'wasabi',
        { access_key_id: 'AK', secret_access_key: 'SK', endpoint: 'https://s3.eu-central-1.wasabisys.com' },
      ],
      [
        'minio',
        's3_compatible',
        { access_key_id: 'AK', secret_access_key: 'SK', endpoint: 'http://nas.lan:9000', path_style: false },
      ],
      [
        'envs',
        'amazon_s3',
        { access_key_id: { env: 'AWS_ACCESS_KEY_ID' }, secret_access_key: { env: 'AWS_SECRET_ACCESS_KEY' } },
      ],
    ]);
    expect(r.skipped).toEqual([
      { name: 'noend', type: 's3', reason: 'its provider Ceph needs an endpoint, and it names none' },
    ]);
  });

  it('reveals passwords of WebDAV, SFTP and FTP; reads SFTP keys; says why a remote cannot be taken', () => {
    const r = convert(`
[dav]
type = webdav
url = https://cloud.example.com/remote.php/dav/files/me
vendor = nextcloud
user = me
pass = ${rcloneObscure('dav pass')}

[sp]
type = webdav
url = https://sp.example.com
vendor = sharepoint
user = me
pass = ${rcloneObscure('x')}

[token]
type = webdav
url = https://dav.example.com
bearer_token = abc

[nas]
type = sftp
host = nas.lan
key_file = /keys/id
key_file_pass = ${rcloneObscure('phrase')}

[pem]
type = sftp
host = nas.lan
user = admin
port = 2222
key_pem = -----BEGIN KEY-----\\nAAAA\\n-----END KEY-----

[agent]
type = sftp
host = nas.lan

[nokey]
type = sftp
host = nas.lan
key_file = /keys/missing

[ftp]
type = ftp
host = ftp.example.com
pass = ${rcloneObscure('ftp pass')}
explicit_tls = true
no_check_certificate = true

[implicit]
type = ftp
host = ftp.example.com
pass = ${rcloneObscure('x')}
tls = true

[badpass]
type = ftp
host = ftp.example.com
pass = plain-text!

[b2]
type = b2
account = id
key = k

[mycrypt]
type = crypt
remote = dav:x

[a b]
type = local
`);
    expect(Object.fromEntries(r.imported.map((i) => [i.name, [i.kind, i.credentials]]))).toEqual({
      dav: [
        'webdav',
        {
          url: 'https://cloud.example.com/remote.php/dav/files/me',
          vendor: 'nextcloud',
          username: 'me',
          password: 'dav pass',
        },
      ],
      sp: ['webdav', { url: 'https://sp.example.com', vendor: 'other', username: 'me', password: 'x' }],
      nas: ['sftp', { host: 'nas.lan', username: 'me', private_key: 'PRIVATE KEY', passphrase: 'phrase' }],
      pem: [
        'sftp',
        {
          host: 'nas.lan',
          username: 'admin',
          port: '2222',
          private_key: '-----BEGIN KEY-----\nAAAA\n-----END KEY-----',
        },
      ],
      ftp: [
        'ftp',
        { host: 'ftp.example.com', username: 'me', password: 'ftp pass', secure: true, insecure_skip_verify: true },
      ],
    });
    const why = Object.fromEntries(r.skipped.map((s) => [s.name, s.reason]));
    expect(why).toMatchObject({
      token: expect.stringMatching(/bearer token/),
      agent: expect.stringMatching(/ssh-agent/),
      nokey: expect.stringMatching(/key_file \/keys\/missing cannot be read/),
      implicit: expect.stringMatching(/implicit FTPS/),
      badpass: expect.stringMatching(/pass is not an obscured password/),
      b2: expect.stringMatching(/backblaze_b2 endpoint=/),
      mycrypt: 'Skyferry has no crypt backend',
      'a b': expect.stringMatching(/a Skyferry remote name is/),
    });
  });

  it('takes the OAuth kinds with their tokens; OneDrive for Business by its drive type', () => {
    const token = (expiry: string) =>
      JSON.stringify({ access_token: 'at', token_type: 'Bearer', refresh_token: 'rt', expiry });
    const r = convert(`
[gd]
type = drive
team_drive = 0ABC
token = ${token('2026-01-02T03:04:05.123456789Z')}

[od]
type = onedrive
drive_type = business
drive_id = b!xyz
token = ${token('2026-01-02T03:04:05Z')}

[db]
type = dropbox
client_id = cid
client_secret = cs
token = ${token('2026-01-02T03:04:05Z')}

[bx]
type = box
token = ${token('2026-01-02T03:04:05Z')}

[ph]
type = google photos
token = ${token('2026-01-02T03:04:05Z')}

[rooted]
type = drive
root_folder_id = 1xyz
token = ${token('2026-01-02T03:04:05Z')}

[never]
type = dropbox
`);
    const at = Date.parse('2026-01-02T03:04:05Z');
    expect(Object.fromEntries(r.imported.map((i) => [i.name, [i.kind, i.credentials]]))).toEqual({
      gd: ['google_drive', { access_token: 'at', refresh_token: 'rt', expiry: String(at + 123), drive_id: '0ABC' }],
      od: ['onedrive_business', { access_token: 'at', refresh_token: 'rt', expiry: String(at), drive_id: 'b!xyz' }],
      db: [
        'dropbox',
        { access_token: 'at', refresh_token: 'rt', expiry: String(at), client_id: 'cid', client_secret: 'cs' },
      ],
      bx: ['box', { access_token: 'at', refresh_token: 'rt', expiry: String(at) }],
      ph: ['google_photos', { access_token: 'at', refresh_token: 'rt', expiry: String(at) }],
    });
    expect(r.imported.find((i) => i.name === 'gd')?.notes.join()).toMatch(/issued to rclone's own OAuth client/);
    expect(r.imported.find((i) => i.name === 'db')?.notes).toEqual([]);
    expect(Object.fromEntries(r.skipped.map((s) => [s.name, s.reason]))).toEqual({
      rooted: expect.stringMatching(/root_folder_id/),
      never: expect.stringMatching(/has no token/),
    });
  });

  it('leaves remotes of names the remotes file has; refuses an encrypted or malformed file', () => {
    expect(convert('[dav]\ntype = local\n', ['dav']).skipped).toEqual([
      { name: 'dav', type: 'local', reason: 'a remote of that name is in the remotes file already' },
    ]);
    expect(() => parseRcloneConfig('# Encrypted rclone configuration File\n\nRCLONE_ENCRYPT_V0:\nabc')).toThrow(
      /encrypted with a password/,
    );
    expect(() => parseRcloneConfig('type = s3\n')).toThrow(RcloneConfigError);
  });
});
