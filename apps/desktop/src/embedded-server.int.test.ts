import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedServerEnv, startEmbeddedServer, type EmbeddedServer } from './embedded-server.ts';
import { serverEntry } from './paths.ts';
import { stageServer } from '../scripts/stage.ts';

// "On this computer" as the shell starts it: the real server in a child process on loopback, its
// own data folder, /healthz before the window loads it, and a clean stop.
const ENTRY = serverEntry({ packaged: false, appPath: resolve(import.meta.dirname, '..'), resourcesPath: '' });
const dirs: string[] = [];
const servers: EmbeddedServer[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

describe('embedded server', () => {
  it('starts on loopback with its own SQLite data folder, ignoring the shell environment, and stops cleanly', async () => {
    const dataDir = join(tempDir('sf-desktop-data-'), 'server');
    const home = tempDir('sf-desktop-home-');
    const logs: string[] = [];
    const server = await startEmbeddedServer({
      execPath: process.execPath,
      entry: ENTRY,
      dataDir,
      port: 0,
      localRoots: home,
      runAsNode: false,
      onLog: (l) => logs.push(l),
      // A shell started from a terminal where a developer's server variables are set.
      baseEnv: {
        ...process.env,
        REDIS_URL: 'redis://127.0.0.1:1',
        DATABASE_URL: 'postgres://127.0.0.1:1/x',
        PORT: '1',
      },
    });
    servers.push(server);
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const health = (await (await fetch(`${server.url}/healthz`)).json()) as { data: { database: string } };
    expect(health.data.database).toBe('sqlite');
    expect(readdirSync(dataDir).some((f) => f.endsWith('.db') || f.endsWith('.sqlite'))).toBe(true);

    // The first account of the install is the operator and may connect folders of the user's home.
    const signup = await fetch(`${server.url}/api/account/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'me@example.com', password: 'correct horse battery' }),
    });
    expect(signup.status).toBe(200);
    const auth = (await signup.json()) as { data: { access_token: string; token_type: string } };
    const kinds = (await (
      await fetch(`${server.url}/api/system/clouds`, {
        headers: { authorization: `${auth.data.token_type} ${auth.data.access_token}` },
      })
    ).json()) as { data: Array<{ cloud_name: string; available?: boolean; roots?: string[] }> };
    const local = kinds.data.find((k) => k.cloud_name === 'local');
    expect(local?.roots).toEqual([realpathSync(home)]);

    const code = await server.stop();
    expect(code).toBe(0);
    expect(alive(server.pid)).toBe(false);
    expect(logs.join('\n')).toContain('shutting down');
    // Stopping again is harmless.
    expect(await server.stop()).toBe(0);
  });

  it('keeps its port between starts so the web app keeps its origin (and its sign-in)', async () => {
    const dataDir = tempDir('sf-desktop-data-');
    const first = await startEmbeddedServer({
      execPath: process.execPath,
      entry: ENTRY,
      dataDir,
      port: 0,
      localRoots: '',
      runAsNode: false,
    });
    const port = Number(new URL(first.url).port);
    await first.stop();
    const second = await startEmbeddedServer({
      execPath: process.execPath,
      entry: ENTRY,
      dataDir,
      port,
      localRoots: '',
      runAsNode: false,
    });
    servers.push(second);
    expect(Number(new URL(second.url).port)).toBe(port);
  });

  it('stops when the shell that started it dies', async () => {
    const dir = tempDir('sf-desktop-parent-');
    const script = join(dir, 'shell.ts');
    writeFileSync(
      script,
      `import { startEmbeddedServer } from ${JSON.stringify(resolve(import.meta.dirname, 'embedded-server.ts'))};
const server = await startEmbeddedServer({ execPath: process.execPath, entry: ${JSON.stringify(ENTRY)},
  dataDir: ${JSON.stringify(join(dir, 'data'))}, port: 0, localRoots: '', runAsNode: false });
console.log('PID ' + server.pid);
setInterval(() => {}, 1000);
`,
    );
    const parent = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolvePid, reject) => {
      let out = '';
      parent.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /PID (\d+)/.exec(out);
        if (m) resolvePid(Number(m[1]));
      });
      parent.once('exit', (code) => reject(new Error(`shell exited ${code}`)));
    });
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await waitFor(() => !alive(pid), 15_000)).toBe(true);
    expect(existsSync(join(dir, 'data'))).toBe(true);
  });

  it('runs the server as an installed app has it: compiled to JavaScript under node_modules', async () => {
    // Inside the repository, so the staged server finds its dependencies in the repository's node_modules.
    const out = join(resolve(import.meta.dirname, '..', 'stage'), `test-${process.pid}`);
    dirs.push(out);
    stageServer(out, { install: false });
    const entry = serverEntry({ packaged: true, appPath: '', resourcesPath: dirname(out) }).replace(
      join(dirname(out), 'server'),
      out,
    );
    expect(existsSync(entry)).toBe(true);
    const staged = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(staged.dependencies)).toEqual(expect.arrayContaining(['better-sqlite3', 'fastify', 'zod']));
    expect(Object.keys(staged.dependencies).some((d) => d.startsWith('@skyferry/') || d.startsWith('node:'))).toBe(
      false,
    );
    const server = await startEmbeddedServer({
      execPath: process.execPath,
      entry,
      dataDir: tempDir('sf-desktop-staged-'),
      port: 0,
      localRoots: '',
      runAsNode: false,
      webDist: tempDir('sf-desktop-web-'),
    });
    servers.push(server);
    const signup = await fetch(`${server.url}/api/account/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'staged@example.com', password: 'correct horse battery' }),
    });
    expect(signup.status).toBe(200);
    // The account pages' assets came along.
    expect((await fetch(`${server.url}/account/signin`)).status).toBe(200);
  });

  it('refuses a start whose server cannot run, with its last words', async () => {
    const dir = tempDir('sf-desktop-bad-');
    const entry = join(dir, 'broken.ts');
    writeFileSync(entry, `console.error('database is locked'); process.exit(3);\n`);
    await expect(
      startEmbeddedServer({
        execPath: process.execPath,
        entry,
        dataDir: dir,
        port: 0,
        localRoots: '',
        runAsNode: false,
      }),
    ).rejects.toThrow(/exited with code 3: database is locked/);
  });

  it('passes only its own configuration to the server', () => {
    const env = embeddedServerEnv({
      execPath: 'electron',
      entry: 'main.js',
      dataDir: '/data',
      port: 4100,
      localRoots: '/home/me',
      secret: 's'.repeat(40),
      runAsNode: true,
      baseEnv: { PATH: '/bin', SKYFERRY_ADMIN_EMAILS: 'x@y', PUBLIC_URL: 'http://evil', HOME: '/home/me' },
    });
    expect(env).toMatchObject({
      PATH: '/bin',
      HOME: '/home/me',
      HOST: '127.0.0.1',
      PORT: '4100',
      SKYFERRY_DATA_DIR: '/data',
      SKYFERRY_LOCAL_ROOTS: '/home/me',
      SKYFERRY_SECRET: 's'.repeat(40),
      ELECTRON_RUN_AS_NODE: '1',
    });
    expect(env.SKYFERRY_ADMIN_EMAILS).toBeUndefined();
    expect(env.PUBLIC_URL).toBeUndefined();
  });
});
