import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATED_CLIENTS, GoogleDriveEmulator, OAuthServer } from '@skyferry/testing';
import { BIN, runBin } from './bin.testing.ts';

// `skyferry remotes add <name> google_drive` signing in against the emulated authorization server:
// the address printed, the consent given by following it, the redirect caught on 127.0.0.1 (or
// pasted), the code exchanged with PKCE, the remote written and usable.

let dir: string;
let oauth: OAuthServer;
let drive: GoogleDriveEmulator;
const client = EMULATED_CLIENTS.google;

const ENV = () => ({
  ...process.env,
  SKYFERRY_CONFIG: join(dir, 'remotes.json'),
  SKYFERRY_STATE_DIR: join(dir, 'state'),
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-oauth-flow-'));
  oauth = await new OAuthServer().start();
  drive = await new GoogleDriveEmulator({ oauth }).start();
});
afterAll(async () => {
  await drive?.close();
  await oauth?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs `remotes add <name> google_drive --no-browser`; `consent` gets the address it printed (the
 * redirect URI registered with the emulator by then) and the child, and plays the browser.
 */
function signIn(
  name: string,
  consent: (authorizeUrl: URL, child: ReturnType<typeof spawn>) => Promise<void>,
): Promise<{ code: number | null; err: string }> {
  return new Promise((done, fail) => {
    const args = [
      'remotes',
      'add',
      name,
      'google_drive',
      `client_id=${client.clientId}`,
      `client_secret=${client.clientSecret}`,
      `auth_url=${oauth.authorizeUrl}`,
      `token_url=${oauth.tokenUrl}`,
      '--no-browser',
    ];
    const child = spawn(BIN, args, { cwd: dir, env: ENV(), stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    let started = false;
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(err);
      if (m && !started) {
        started = true;
        const url = new URL(m[1] as string);
        oauth.registerClient({ ...client, redirectUris: [url.searchParams.get('redirect_uri') as string] });
        consent(url, child).catch(fail);
      }
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, err }));
  });
}

/** The emulator's consent: where /authorize sends the browser back to. */
async function approve(url: URL): Promise<string> {
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return res.headers.get('location') as string;
}

describe('remotes add with an OAuth sign-in', () => {
  it('catches the redirect on 127.0.0.1, exchanges the code with PKCE and writes a working remote', async () => {
    const r = await signIn('gd', async (url) => {
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('scope')).toContain('https://www.googleapis.com/auth/drive');
      const back = await fetch(await approve(url));
      expect(await back.text()).toContain('Skyferry is connected');
    });
    expect(r.code, r.err).toBe(0);
    const file = join(dir, 'remotes.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      remotes: Record<string, { kind: string; credentials: Record<string, unknown> }>;
    };
    expect(saved.remotes.gd?.kind).toBe('google_drive');
    expect(saved.remotes.gd?.credentials).toMatchObject({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      client_id: client.clientId,
    });
    expect(saved.remotes.gd?.credentials).not.toHaveProperty('auth_url');
    // The emulator's API address is added to the remote.
    (saved.remotes.gd as { credentials: Record<string, unknown> }).credentials.api_url = drive.url;
    await writeFile(file, JSON.stringify(saved), { mode: 0o600 });
    await writeFile(join(dir, 'hello.txt'), 'hi');
    const copied = await runBin(['copy', join(dir, 'hello.txt'), 'gd:', '--quiet'], { cwd: dir, env: ENV() });
    expect(copied.code, copied.err).toBe(0);
    const listed = await runBin(['ls', 'gd:', '--json'], { cwd: dir, env: ENV() });
    expect(JSON.parse(listed.out)).toMatchObject([{ name: 'hello.txt', size: 2 }]);
  }, 60_000);

  it('takes the address the browser ended on, pasted, when the browser is on another machine', async () => {
    const r = await signIn('pasted', async (url, child) => {
      child.stdin?.write(`${await approve(url)}\n`);
    });
    expect(r.code, r.err).toBe(0);
    const saved = JSON.parse(await readFile(join(dir, 'remotes.json'), 'utf8')) as { remotes: object };
    expect(Object.keys(saved.remotes)).toContain('pasted');
  }, 60_000);

  it('a refused consent writes nothing and says why (exit 2)', async () => {
    oauth.denyConsent = true;
    try {
      const r = await signIn('denied', async (url) => {
        await fetch(await approve(url));
      });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/Google Drive did not allow the connection: The user denied access/);
      const saved = JSON.parse(await readFile(join(dir, 'remotes.json'), 'utf8')) as { remotes: object };
      expect(Object.keys(saved.remotes)).not.toContain('denied');
    } finally {
      oauth.denyConsent = false;
    }
  }, 60_000);
});
