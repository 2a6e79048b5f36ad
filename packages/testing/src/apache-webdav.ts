import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireProgram, startDaemon, waitFor } from './process.ts';

export interface WebdavServer {
  /** Base URL of the WebDAV share, ending in "/". */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** The folder the share serves. */
  readonly dir: string;
  stop(): Promise<void>;
}

/** Apache's share, whose password a test can change (Apache reads the password file on every request). */
export interface ApacheWebdavServer extends WebdavServer {
  changePassword(password: string): void;
}

const MODULES = '/usr/lib/apache2/modules';

/** Owner for the served folder: as root, Apache's children run as www-data; otherwise as us. */
function serveAs(): { user: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'www-data']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'www-data']).toString().trim());
  return { user: 'www-data', uid, gid };
}

function chownTree(path: string, uid: number, gid: number): void {
  execFileSync('chown', ['-R', `${uid}:${gid}`, path]);
}

function errorLog(root: string): string {
  try {
    return readFileSync(join(root, 'error.log'), 'utf8').slice(-4000);
  } catch {
    return '';
  }
}

async function httpOk(url: string, auth: string): Promise<boolean> {
  const res = await fetch(url, { method: 'OPTIONS', headers: { authorization: auth } });
  await res.arrayBuffer();
  return res.status < 500;
}

/**
 * Starts Apache httpd with mod_dav and mod_dav_fs (Debian's `apache2`) on 127.0.0.1, serving a
 * temporary folder with basic authentication, from a generated minimal configuration. With
 * `readOnly`, the signed-in user may read but every change is refused (403), as a read-only
 * share is usually configured.
 */
export async function startApacheWebdav(opts: { readOnly?: boolean } = {}): Promise<ApacheWebdavServer> {
  const apache = await requireProgram('apache2', 'apache2');
  const root = mkdtempSync(join(tmpdir(), 'skyferry-apache-'));
  const dir = join(root, 'data');
  mkdirSync(dir);
  const port = await freePort();
  const username = 'skyferry';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const writePassword = (pw: string) => {
    const sha = createHash('sha1').update(pw).digest('base64');
    writeFileSync(join(root, 'htpasswd'), `${username}:{SHA}${sha}\n`);
  };
  writePassword(password);
  const owner = serveAs();
  const mod = (name: string, file: string) => `LoadModule ${name} ${MODULES}/${file}`;
  const conf = [
    `ServerRoot ${root}`,
    `DefaultRuntimeDir ${root}`,
    `PidFile ${root}/httpd.pid`,
    `Listen 127.0.0.1:${port}`,
    'ServerName 127.0.0.1',
    mod('mpm_event_module', 'mod_mpm_event.so'),
    mod('authn_core_module', 'mod_authn_core.so'),
    mod('authn_file_module', 'mod_authn_file.so'),
    mod('authz_core_module', 'mod_authz_core.so'),
    mod('authz_user_module', 'mod_authz_user.so'),
    mod('auth_basic_module', 'mod_auth_basic.so'),
    mod('dav_module', 'mod_dav.so'),
    mod('dav_fs_module', 'mod_dav_fs.so'),
    mod('mime_module', 'mod_mime.so'),
    ...(owner ? [`User ${owner.user}`, `Group ${owner.user}`] : []),
    `ErrorLog ${root}/error.log`,
    'LogLevel warn',
    'TypesConfig /etc/mime.types',
    `DavLockDB ${root}/davlock`,
    // Unlimited request bodies: the default 1 GB cap would stop big uploads.
    'LimitRequestBody 0',
    'KeepAlive On',
    'MaxKeepAliveRequests 0',
    'KeepAliveTimeout 30',
    'Timeout 120',
    'StartServers 1',
    'ThreadsPerChild 32',
    'MaxRequestWorkers 64',
    `DocumentRoot ${dir}`,
    `<Directory ${dir}>`,
    '  Dav On',
    '  AuthType Basic',
    '  AuthName "skyferry"',
    `  AuthUserFile ${root}/htpasswd`,
    ...(opts.readOnly
      ? [
          '  <Limit GET HEAD OPTIONS PROPFIND>',
          '    Require valid-user',
          '  </Limit>',
          '  <LimitExcept GET HEAD OPTIONS PROPFIND>',
          '    Require all denied',
          '  </LimitExcept>',
        ]
      : ['  Require valid-user']),
    '  Options None',
    '  AllowOverride None',
    '</Directory>',
    '',
  ].join('\n');
  const confPath = join(root, 'httpd.conf');
  writeFileSync(confPath, conf);
  if (owner) chownTree(root, owner.uid, owner.gid);
  const daemon = startDaemon(apache, ['-f', confPath, '-DFOREGROUND']);
  const url = `http://127.0.0.1:${port}/`;
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  await waitFor(async () => {
    if (daemon.child.exitCode !== null) throw new Error(`apache2 exited: ${daemon.output()} ${errorLog(root)}`);
    return httpOk(url, auth);
  }, 'Apache WebDAV to answer');
  return {
    url,
    username,
    password,
    dir,
    changePassword(pw) {
      writePassword(pw);
      if (owner) chownSync(join(root, 'htpasswd'), owner.uid, owner.gid);
    },
    async stop() {
      // SIGTERM to the parent stops its children too (graceful-stop would wait for keep-alives).
      await daemon.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Makes files created directly in a served folder (by a test) belong to the server's user. */
export function giveToServer(path: string): void {
  const owner = serveAs();
  if (owner) chownSync(path, owner.uid, owner.gid);
}
