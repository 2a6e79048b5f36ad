import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort, requireProgram, run, startDaemon, waitFor } from './process.ts';

export interface SshServer {
  readonly host: string;
  readonly port: number;
  /** The login (root when the tests run as root, else the current user). */
  readonly username: string;
  /** An OpenSSH private key (ed25519, no passphrase) accepted for `username`. */
  readonly privateKey: string;
  /** A second key for the same user, protected by `passphrase`. */
  readonly encryptedKey: string;
  readonly passphrase: string;
  /** The folder SFTP sessions start in (a temporary folder). */
  readonly dir: string;
  /** Takes back every client key (sshd reads the authorized keys on every login). */
  revokeClientKeys(): void;
  /** Authorizes the client keys again. */
  restoreClientKeys(): void;
  /** Replaces the server's host key and restarts it on the same port (host-key-change tests). */
  rotateHostKey(): Promise<void>;
  stop(): Promise<void>;
}

function banner(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('SSH-'));
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts OpenSSH's sshd (Debian's `openssh-server`) on 127.0.0.1 with a throwaway host key and its
 * own configuration: public-key login only, for one user, SFTP only (internal-sftp) starting in a
 * temporary folder. Works as root (as sshd requires: absolute path, /run/sshd) and as a normal user.
 */
export async function startSshd(): Promise<SshServer> {
  const sshd = await requireProgram('sshd', 'openssh-server', ['/usr/sbin']);
  const keygen = await requireProgram('ssh-keygen', 'openssh-client');
  const root = mkdtempSync(join(tmpdir(), 'skyferry-sshd-'));
  const dir = join(root, 'data');
  mkdirSync(dir);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const username = asRoot ? 'root' : userInfo().username;
  const passphrase = 'correct horse battery';
  await run(keygen, ['-q', '-t', 'ed25519', '-N', '', '-f', join(root, 'client_key')]);
  await run(keygen, ['-q', '-t', 'rsa', '-b', '2048', '-N', passphrase, '-f', join(root, 'client_key2')]);
  const authorize = (keys: string) => writeFileSync(join(root, 'authorized_keys'), keys, { mode: 0o600 });
  authorize(readFileSync(join(root, 'client_key.pub'), 'utf8') + readFileSync(join(root, 'client_key2.pub'), 'utf8'));
  const port = await freePort();
  let generation = 0;
  const writeConfig = async (): Promise<string> => {
    generation += 1;
    const hostKey = join(root, `host_key_${generation}`);
    await run(keygen, ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    const conf = [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${root}/sshd.pid`,
      `AuthorizedKeysFile ${root}/authorized_keys`,
      `AllowUsers ${username}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'UseDNS no',
      'LogLevel ERROR',
      'MaxSessions 32',
      'MaxStartups 64',
      `Subsystem sftp internal-sftp -d ${dir}`,
      `ForceCommand internal-sftp -d ${dir}`,
      '',
    ].join('\n');
    const path = join(root, 'sshd_config');
    writeFileSync(path, conf);
    return path;
  };
  const launch = async () => {
    const confPath = await writeConfig();
    const d = startDaemon(sshd, ['-D', '-e', '-f', confPath]);
    await waitFor(async () => {
      if (d.child.exitCode !== null) throw new Error(`sshd exited: ${d.output()}`);
      return banner(port);
    }, 'sshd to listen');
    return d;
  };
  let daemon = await launch();
  return {
    host: '127.0.0.1',
    port,
    username,
    privateKey: readFileSync(join(root, 'client_key'), 'utf8'),
    encryptedKey: readFileSync(join(root, 'client_key2'), 'utf8'),
    passphrase,
    dir,
    revokeClientKeys() {
      authorize('');
    },
    restoreClientKeys() {
      authorize(
        readFileSync(join(root, 'client_key.pub'), 'utf8') + readFileSync(join(root, 'client_key2.pub'), 'utf8'),
      );
    },
    async rotateHostKey() {
      await daemon.stop();
      daemon = await launch();
    },
    async stop() {
      await daemon.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
