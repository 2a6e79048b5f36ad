import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from './cli.ts';
import { runIn } from './run.testing.ts';

// The command line in-process (the same runCli the `skyferry` bin calls) on folders of this
// machine; cli.int.test.ts runs the bin itself against real S3 and SFTP servers.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return runIn(dir, undefined, argv);
}

/** `cli` with `input` as its standard input. */
function cliWithInput(input: string | undefined, ...argv: string[]) {
  return runIn(dir, input, argv);
}

async function tree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile())
      out[join(e.parentPath, e.name).slice(root.length + 1)] = await readFile(join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

async function writeRemotes(value: unknown, mode = 0o600): Promise<void> {
  await writeFile(join(dir, 'remotes.json'), typeof value === 'string' ? value : JSON.stringify(value));
  await chmod(join(dir, 'remotes.json'), mode);
}

const s3Remote = (secret: unknown) => ({
  remotes: {
    store: {
      kind: 's3_compatible',
      credentials: { bucket: 'b', access_key_id: 'AKID', secret_access_key: secret, endpoint: 'http://127.0.0.1:9' },
    },
  },
});

describe('skyferry usage', () => {
  it('prints help with every command and exits 0; no command is a usage mistake (exit 2)', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(EXIT.ok);
    for (const c of ['copy', 'sync', 'mirror', 'incremental', 'bisync', 'ls', 'remotes'])
      expect(help.out).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect((await cli()).code).toBe(EXIT.usage);
    const version = await cli('--version');
    expect(version.out).toMatch(/^skyferry \d+\.\d+\.\d+\n$/);
  });

  it.each([
    [['frob', 'a', 'b'], /unknown command "frob"/],
    [['copy', 'a', 'b', '--bogus'], /Unknown option '--bogus'/],
    [['copy', 'a'], /usage: skyferry copy <source>\.\.\. <target>/],
    [['sync', 'a', 'b', 'c'], /usage: skyferry sync <source> <target>/],
    [['copy', 'a', 'b', '--transfers', '0'], /--transfers: "0" is not a whole number from 1 to 256/],
    [['copy', 'a', 'b', '--same-name', 'maybe'], /--same-name: "maybe" is not one of overwrite, skip/],
    [['copy', 'a', 'b', '--include', 'picture,movies'], /--include: unknown file type movies/],
    [['copy', 'a', 'b', '--include', 'picture', '--exclude', 'video'], /cannot be used together/],
    [['mirror', 'a', 'b', '--same-name', 'skip'], /--same-name does not apply to mirror/],
    [['sync', 'a', 'b', '--conflict', 'newer'], /--conflict applies to bisync only/],
    [['copy', 'nowhere:x', 'b'], /no remote named "nowhere"/],
  ])('%j: a clear message, exit 2, nothing written', async (argv, message) => {
    await mkdir(join(dir, 'a'));
    await writeFile(join(dir, 'a', 'f.txt'), 'x');
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(message);
    expect(r.err).toMatch(/^skyferry: /);
    expect(await readdir(dir)).not.toContain('b');
  });
});

describe('the remotes file', () => {
  it.each([
    ['{ not json', /is not valid JSON/],
    [{ remotes: [] }, /must hold an object/],
    [{ remotes: { x: { kind: 'webdav', credentials: { url: 'http://h' } } } }, /a name is at least two letters/],
    [
      { remotes: { gd: { kind: 'google_drive', credentials: {} } } },
      /Google Drive needs its OAuth token .*import-rclone/,
    ],
    [
      { remotes: { nas: { kind: 'floppy' } } },
      /kind "floppy" is not one the command line opens; use one of .*s3_compatible/,
    ],
    [{ remotes: { nas: { kind: 'sftp', credentials: { host: 'h' } } } }, /needs "username"/],
    [
      { remotes: { nas: { kind: 'sftp', credentials: { host: 'h', username: 'u', colour: 1 } } } },
      /has no field "colour"/,
    ],
    [s3Remote({ env: 'NOT_SET_ANYWHERE' }), /read from \$NOT_SET_ANYWHERE, which is not set/],
    // The web app's Add cloud checks (contract checkCredentials), not only the required fields.
    [
      { remotes: { nas: { kind: 'sftp', credentials: { host: 'h', username: 'u', port: '22x' } } } },
      /nas.*: Port is invalid\./,
    ],
    [{ remotes: { dav: { kind: 'webdav', credentials: { url: 'file:///etc' } } } }, /dav.*: Server URL is invalid\./],
  ])('%j is refused with exit 2 and a message naming the problem', async (content, message) => {
    await writeRemotes(content);
    const r = await cli('remotes');
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(message);
  });

  it('remotes add writes a checked remote, readable by its owner alone; secrets by reference, from a file or from stdin', async () => {
    const file = join(dir, 'remotes.json');
    const add = await cli(
      'remotes',
      'add',
      'store',
      's3_compatible',
      'endpoint=http://127.0.0.1:9',
      'bucket=b',
      'access_key_id=AKID',
      'secret_access_key=@env:S3_SECRET',
    );
    expect(add.err).toBe('');
    expect(add.code).toBe(EXIT.ok);
    expect(add.out).toBe(`added remote store (S3-compatible storage) to ${file}\n`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(s3Remote({ env: 'S3_SECRET' }));

    await writeFile(join(dir, 'id_test'), 'KEY MATERIAL\n');
    const nas = await cli(
      'remotes',
      'add',
      'nas',
      'sftp',
      'host=nas.lan',
      'port=2222',
      'username=me',
      'private_key=@file:id_test',
    );
    expect(nas.code).toBe(EXIT.ok);
    const dav = await cliWithInput(
      's3cret pass\n',
      'remotes',
      'add',
      'dav',
      'webdav',
      'url=https://dav.example.com/d',
      'username=u',
      'password=-',
    );
    expect(dav.code).toBe(EXIT.ok);
    expect(dav.out + dav.err).not.toContain('s3cret');
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      remotes: Record<string, { credentials: Record<string, unknown> }>;
    };
    // The checked values: the port a number, the key and the password as given.
    expect(saved.remotes.nas?.credentials).toEqual({
      host: 'nas.lan',
      port: 2222,
      username: 'me',
      private_key: 'KEY MATERIAL\n',
    });
    expect(saved.remotes.dav?.credentials.password).toBe('s3cret pass');
    expect((await cli('remotes')).out).toBe(
      'store\ts3_compatible\tS3-compatible storage\nnas\tsftp\tSFTP\ndav\twebdav\tWebDAV\n',
    );

    // A secret typed on the command line works, with a note about the shell's history.
    const typed = await cli(
      'remotes',
      'add',
      'dav2',
      'webdav',
      'url=https://dav.example.com/d',
      'username=u',
      'password=typed-pw',
    );
    expect(typed.code).toBe(EXIT.ok);
    expect(typed.err).toMatch(/^note: password was typed on the command line and may be in your shell's history/);
    expect(typed.out).not.toContain('typed-pw');

    // Removing forgets it and what was kept about it.
    await mkdir(join(dir, 'state', 'remotes'), { recursive: true });
    await writeFile(join(dir, 'state', 'remotes', 'nas.json'), '{"hostKey":"x"}');
    // Any valid name is a name, "__proto__" too.
    const odd = await cli('remotes', 'add', '__proto__', 'webdav', 'url=https://dav.example.com/d');
    expect(odd.code).toBe(EXIT.ok);
    expect((await cli('remotes')).out).toContain('__proto__\twebdav\tWebDAV\n');
    expect((await cli('remotes', 'remove', '__proto__')).code).toBe(EXIT.ok);
    const removed = await cli('remotes', 'remove', 'nas');
    expect(removed.code).toBe(EXIT.ok);
    expect(Object.keys((JSON.parse(await readFile(file, 'utf8')) as { remotes: object }).remotes)).toEqual([
      'store',
      'dav',
      'dav2',
    ]);
    expect(await readdir(join(dir, 'state', 'remotes'))).toEqual([]);
  });

  it.each([
    [
      [
        'remotes',
        'add',
        'store',
        's3_compatible',
        'bucket=b',
        'access_key_id=A',
        'secret_access_key=@env:S3_SECRET',
        'endpoint=http://h',
      ],
      /there is a remote "store" .* already; remove it first/,
    ],
    [['remotes', 'add', 'gd', 'google_drive'], /Google Drive needs an OAuth client: set GOOGLE_CLIENT_ID/],
    [['remotes', 'add', 'nas', 'sftp', 'host=h'], /needs "username"/],
    [['remotes', 'add', 'nas', 'sftp', 'host=h', 'username=u', 'port=22x'], /Port is invalid\./],
    [['remotes', 'add', 'nas', 'sftp', 'host=h', 'username=u', 'colour=red'], /has no field "colour"/],
    [['remotes', 'add', 'nas', 'sftp', 'host', 'username=u'], /"host" is not field=value/],
    [
      ['remotes', 'add', 'nas', 'sftp', 'host=h', 'username=u', 'password=@env:NOT_SET_ANYWHERE'],
      /NOT_SET_ANYWHERE, which is not set/,
    ],
    [
      ['remotes', 'add', 'nas', 'sftp', 'host=h', 'username=u', 'private_key=@file:missing'],
      /field "private_key": cannot read .*missing/,
    ],
    [['remotes', 'add', 'nas'], /usage: skyferry remotes add <name> <kind>/],
    [['remotes', 'remove', 'nothing'], /there is no remote "nothing"/],
    [['remotes', 'rename', 'x'], /remotes rename: use remotes, remotes add, remotes remove or remotes import-rclone/],
    [['remotes', 'add', '__proto__', 'sftp', 'host=h'], /needs "username"/],
  ])('%j is refused with exit 2, the file unchanged', async (argv, message) => {
    await writeRemotes(s3Remote({ env: 'S3_SECRET' }));
    const before = await readFile(join(dir, 'remotes.json'), 'utf8');
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(message);
    expect(await readFile(join(dir, 'remotes.json'), 'utf8')).toBe(before);
  });

  it('refuses a file holding a secret that other users can read, and never prints a secret', async () => {
    await writeRemotes(s3Remote('clear-text-secret'), 0o644);
    const open = await cli('remotes');
    expect(open.code).toBe(EXIT.usage);
    expect(open.err).toMatch(/other users can read it \(mode 644\); run: chmod 600/);
    expect(open.err + open.out).not.toContain('clear-text-secret');

    await chmod(join(dir, 'remotes.json'), 0o600);
    const listed = await cli('remotes');
    expect(listed.code).toBe(EXIT.ok);
    expect(listed.out).toBe('store\ts3_compatible\tS3-compatible storage\n');

    // A secret read from the environment may sit in a file others can read: it holds no secret.
    await writeRemotes(s3Remote({ env: 'S3_SECRET' }), 0o644);
    const fromEnv = await cli('remotes');
    expect(fromEnv.code).toBe(EXIT.ok);
    expect(fromEnv.out + fromEnv.err).not.toContain('from-env-secret');
  });
});

describe('copies and syncs between folders of this machine', () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'src', 'docs'), { recursive: true });
    await writeFile(join(dir, 'src', 'a.txt'), 'alpha');
    await writeFile(join(dir, 'src', 'docs', 'b.pdf'), 'bravo');
    await writeFile(join(dir, 'src', 'c.jpg'), 'charlie');
  });

  it('a dry run lists what would happen and changes nothing; the copy then does exactly that', async () => {
    const dry = await cli('copy', 'src', 'out', '--dry-run');
    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toContain('copy     out/src/a.txt (5 B): new');
    expect(dry.out).toContain('copy     out/src/docs/b.pdf (5 B): new');
    expect(dry.out).toMatch(/Dry run, nothing changed: would copy 3 /);
    expect(await readdir(dir)).not.toContain('out');

    await mkdir(join(dir, 'out'));
    const run = await cli('copy', 'src', 'out');
    expect(run.code).toBe(EXIT.ok);
    expect(run.out).toMatch(/^success: 3 of 3 done .* 3 added, 0 updated, 0 deleted/);
    expect(await tree(join(dir, 'out'))).toEqual({
      'src/a.txt': 'alpha',
      'src/docs/b.pdf': 'bravo',
      'src/c.jpg': 'charlie',
    });
    // Again: everything is there already.
    const again = await cli('copy', 'src', 'out', '--json');
    expect(JSON.parse(again.out)).toMatchObject({ outcome: 'success', summary: { added: 0, skipped: 3 } });
  });

  it('copies only the file types asked for', async () => {
    await mkdir(join(dir, 'out'));
    const r = await cli('sync', 'src', 'out', '--include', 'picture,pdf');
    expect(r.code).toBe(EXIT.ok);
    expect(await tree(join(dir, 'out'))).toEqual({ 'docs/b.pdf': 'bravo', 'c.jpg': 'charlie' });
  });

  it('a mirror deleting more than half of the target needs --yes; deleted files go to the trash', async () => {
    await mkdir(join(dir, 'out'));
    for (const n of ['x1', 'x2', 'x3', 'x4']) await writeFile(join(dir, 'out', n), n);
    const refused = await cli('mirror', 'src', 'out');
    expect(refused.code).toBe(EXIT.failed);
    expect(refused.err).toMatch(
      /Nothing was done: this would delete 4 of 4 files on the target\. .* run again with --yes/,
    );
    expect(Object.keys(await tree(join(dir, 'out'))).sort()).toEqual(['x1', 'x2', 'x3', 'x4']);

    const done = await cli('mirror', 'src', 'out', '--yes');
    expect(done.code).toBe(EXIT.ok);
    expect(await tree(join(dir, 'out'))).toEqual({ 'a.txt': 'alpha', 'docs/b.pdf': 'bravo', 'c.jpg': 'charlie' });
    const trash = await tree(join(dir, '.skyferry-trash'));
    expect(Object.values(trash).sort()).toEqual(['x1', 'x2', 'x3', 'x4']);
  });

  it('bisync merges on the first run, then carries changes and deletions both ways', async () => {
    await mkdir(join(dir, 'other'));
    await writeFile(join(dir, 'other', 'only-there.txt'), 'delta');
    const first = await cli('bisync', 'src', 'other');
    expect(first.code).toBe(EXIT.ok);
    const merged = { 'a.txt': 'alpha', 'docs/b.pdf': 'bravo', 'c.jpg': 'charlie', 'only-there.txt': 'delta' };
    expect(await tree(join(dir, 'src'))).toEqual(merged);
    expect(await tree(join(dir, 'other'))).toEqual(merged);

    await writeFile(join(dir, 'src', 'a.txt'), 'alpha, edited');
    await rm(join(dir, 'other', 'c.jpg'));
    const second = await cli('bisync', 'src', 'other');
    expect(second.code).toBe(EXIT.ok);
    const after = { 'a.txt': 'alpha, edited', 'docs/b.pdf': 'bravo', 'only-there.txt': 'delta' };
    expect(await tree(join(dir, 'src'))).toEqual(after);
    expect(await tree(join(dir, 'other'))).toEqual(after);
  });

  it('leaves symbolic links alone and lists each (exit 3); -L follows them; --skip-links says nothing', async () => {
    await symlink('docs', join(dir, 'src', 'docs-link'));
    await symlink('nowhere', join(dir, 'src', 'dangling'));
    await mkdir(join(dir, 'out'));
    const dry = await cli('sync', 'src', 'out', '--dry-run');
    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toContain('skip     src/docs-link/: symbolic link, not followed (-L follows links)');
    expect(dry.out).toContain('skip     src/dangling: symbolic link, not followed (-L follows links)');

    const r = await cli('sync', 'src', 'out');
    expect(r.code).toBe(EXIT.linksLeft);
    expect(r.out).toMatch(/^success: 3 of 3 done .*, 2 symbolic links left alone\.\n$/);
    expect(r.err).toBe(
      'skipped: src/dangling: symbolic link, not followed (-L follows links)\n' +
        'skipped: src/docs-link/: symbolic link, not followed (-L follows links)\n',
    );
    expect(await tree(join(dir, 'out'))).toEqual({ 'a.txt': 'alpha', 'docs/b.pdf': 'bravo', 'c.jpg': 'charlie' });

    const quiet = await cli('sync', 'src', 'out', '--skip-links');
    expect(quiet.code).toBe(EXIT.ok);
    expect(quiet.err).toBe('');

    const followed = await cli('sync', 'src', 'out', '-L');
    expect(followed.code).toBe(EXIT.linksLeft);
    expect(followed.err).toBe('skipped: src/dangling: symbolic link, leads nowhere\n');
    expect(await tree(join(dir, 'out'))).toEqual({
      'a.txt': 'alpha',
      'docs/b.pdf': 'bravo',
      'docs-link/b.pdf': 'bravo',
      'c.jpg': 'charlie',
    });
    expect((await cli('sync', 'src', 'out', '-L', '--skip-links')).code).toBe(EXIT.usage);
  });

  it('a second run of a pair while one holds it stops with a clear message; a lock left by a dead process is taken over', async () => {
    await mkdir(join(dir, 'other'));
    expect((await cli('bisync', 'src', 'other')).code).toBe(EXIT.ok);
    const state = await tree(join(dir, 'state', 'two-way'));
    // Two runs of the pair at once (either side named first): one runs, the other stops at once.
    await writeFile(join(dir, 'src', 'new.txt'), 'n');
    const [a, b] = await Promise.all([cli('bisync', 'src', 'other'), cli('bisync', 'other', 'src')]);
    const [won, lost] = a.code === EXIT.ok ? [a, b] : [b, a];
    expect(won.code).toBe(EXIT.ok);
    expect(lost.code).toBe(EXIT.failed);
    const m =
      /^skyferry: another sync of this pair is running \(skyferry bisync, process (\d+) on (.+), since .+ UTC; lock (.+\.lock)\); run again once it has finished\n$/.exec(
        lost.err,
      );
    expect(m, lost.err).not.toBeNull();
    expect(Number(m?.[1])).toBe(process.pid);
    expect(m?.[2]).toBe(hostname());
    const lock = m?.[3] as string;
    // Released once the run ended; the state the winner wrote stands.
    expect(await readdir(join(dir, 'state', 'locks'))).toEqual([]);
    // Whichever won, its state is whole: no half-written next state, every line a record.
    const states = await tree(join(dir, 'state', 'two-way'));
    expect(Object.keys(states).filter((n) => !n.endsWith('.jsonl'))).toEqual([]);
    expect(Object.keys(states)).toEqual(expect.arrayContaining(Object.keys(state)));
    for (const text of Object.values(states)) for (const line of text.split('\n').filter(Boolean)) JSON.parse(line);
    expect(await tree(join(dir, 'other'))).toMatchObject({ 'new.txt': 'n' });

    // A lock whose process is gone (killed) is stale: the next run takes it over.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(
      lock,
      JSON.stringify({ pid: gone, host: hostname(), since: '2026-11-28T10:00:00.000Z', command: 'bisync', token: 't' }),
    );
    await writeFile(join(dir, 'src', 'newer.txt'), 'n2');
    const after = await cli('bisync', 'src', 'other');
    expect(after.err).toBe('');
    expect(after.code).toBe(EXIT.ok);
    expect(await readdir(join(dir, 'state', 'locks'))).toEqual([]);
    expect(await tree(join(dir, 'other'))).toMatchObject({ 'newer.txt': 'n2' });
  });

  it('a source that does not exist fails with the reason, exit 1', async () => {
    await mkdir(join(dir, 'out'));
    const r = await cli('copy', 'missing', 'out');
    expect(r.code).toBe(EXIT.failed);
    expect(r.err).toMatch(/not_found/);
  });

  it('check finds nothing after a copy, then each file missing, resized or changed; it writes nothing', async () => {
    await mkdir(join(dir, 'out'));
    expect((await cli('sync', 'src', 'out')).code).toBe(EXIT.ok);
    const clean = await cli('check', 'src', 'out');
    expect(clean.code).toBe(EXIT.ok);
    expect(clean.out).toBe('No differences; 3 on both sides: 3 the same by hash.\n');

    await writeFile(join(dir, 'out', 'a.txt'), 'ALPHA'); // same size, other bytes
    await writeFile(join(dir, 'out', 'c.jpg'), 'charlie!');
    await rm(join(dir, 'out', 'docs', 'b.pdf'));
    await writeFile(join(dir, 'out', 'extra.txt'), 'x');
    const before = await tree(join(dir, 'out'));
    const found = await cli('check', 'src', 'out');
    expect(found.code).toBe(EXIT.failed);
    expect(found.out.split('\n')).toEqual([
      '* a.txt: content differs (md5)',
      '* c.jpg: sizes differ (7 B on the source, 8 B on the target)',
      '+ docs/b.pdf: only on the source',
      '- extra.txt: only on the target',
      '4 differences; 2 on both sides: 0 the same by hash.',
      '',
    ]);
    expect(await tree(join(dir, 'out'))).toEqual(before);
    expect(await tree(join(dir, 'src'))).toEqual({ 'a.txt': 'alpha', 'docs/b.pdf': 'bravo', 'c.jpg': 'charlie' });

    // A file against a folder: against the file of its name there.
    const file = await cli('check', 'src/c.jpg', 'out');
    expect(file.code).toBe(EXIT.failed);
    expect(file.out).toBe(
      '* c.jpg: sizes differ (7 B on the source, 8 B on the target)\n1 difference; 1 on both sides: 0 the same by hash.\n',
    );
    expect((await cli('check', 'src/docs', 'src/docs')).out).toBe(
      'No differences; 1 on both sides: 1 the same by hash.\n',
    );

    // One way: extras on the target are fine; --json carries the same differences.
    const oneWay = await cli('check', 'src', 'out', '--one-way', '--json');
    expect(oneWay.code).toBe(EXIT.failed);
    expect(
      (JSON.parse(oneWay.out) as { differences: { path: string; kind: string }[] }).differences.map(
        (d) => `${d.kind} ${d.path}`,
      ),
    ).toEqual(['content /a.txt', 'size /c.jpg', 'missing_on_target /docs/b.pdf']);
    // Only pictures: c.jpg alone is compared.
    const pictures = await cli('check', 'src', 'out', '--include', 'picture', '--one-way');
    expect(pictures.out).toMatch(/^\* c\.jpg: sizes differ .*\n1 difference; 1 on both sides/);
  });

  it('move copies, then deletes each source file the target holds the same; a dry run deletes nothing', async () => {
    await mkdir(join(dir, 'out'));
    const dry = await cli('move', 'src', 'out', '--dry-run');
    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toMatch(
      /would copy 3 .*\nThen each source file the target is checked to hold the same is deleted\.\n$/s,
    );
    expect(Object.keys(await tree(join(dir, 'src')))).toHaveLength(3);

    const r = await cli('move', 'src', 'out');
    expect(r.err).toBe('');
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toMatch(
      /^success: 3 of 3 done .*\nMoved: 3 source files deleted, each once the target was checked to hold the same\. Folders are left in place\.\n$/s,
    );
    expect(await tree(join(dir, 'out'))).toEqual({
      'src/a.txt': 'alpha',
      'src/docs/b.pdf': 'bravo',
      'src/c.jpg': 'charlie',
    });
    expect(await tree(join(dir, 'src'))).toEqual({});
    expect(await readdir(join(dir, 'src'))).toEqual(['docs']);
  });

  it('move --delete-empty-src-dirs removes the folders it emptied, the moved folder itself once nothing is left', async () => {
    await mkdir(join(dir, 'src', 'was-empty'));
    await mkdir(join(dir, 'src', 'sub', 'deeper'), { recursive: true });
    await writeFile(join(dir, 'src', 'sub', 'deeper', 'x.txt'), 'x');
    await mkdir(join(dir, 'out', 'src'), { recursive: true });
    await writeFile(join(dir, 'out', 'src', 'a.txt'), 'ALPHA');
    const some = await cli('move', 'src', 'out', '--same-name', 'skip', '--delete-empty-src-dirs');
    expect(some.code).toBe(EXIT.failed);
    expect(some.out).toMatch(/Moved: 3 source files deleted, .*; 1 kept\. 2 emptied folders removed\.\n$/);
    // a.txt stays (the target's differs), so src stays; docs and sub (with sub/deeper) went; a
    // folder empty before the move was not emptied by it, and stays.
    expect((await readdir(join(dir, 'src'))).sort()).toEqual(['a.txt', 'was-empty']);

    await writeFile(join(dir, 'out', 'src', 'a.txt'), 'alpha');
    const rest = await cli('move', 'src', 'out', '--delete-empty-src-dirs');
    expect(rest.code).toBe(EXIT.ok);
    expect(rest.out).toMatch(/Moved: 1 source file deleted, .*\. 1 emptied folder removed\.\n$/);
    expect(await readdir(dir)).not.toContain('src');
    expect(await tree(join(dir, 'out', 'src'))).toEqual({
      'a.txt': 'alpha',
      'c.jpg': 'charlie',
      'docs/b.pdf': 'bravo',
      'sub/deeper/x.txt': 'x',
    });
  });

  it('refuses a target inside its source, the source itself (also through a link), or a sync into its own source (exit 2)', async () => {
    await mkdir(join(dir, 'src', 'inner'));
    await symlink(dir, join(dir, 'here'));
    const real = await realpath(dir);
    for (const [args, message] of [
      [['move', 'src', '.'], `the target ${real}/src is the source ${real}/src itself`],
      [['move', 'src', 'here'], `the target ${real}/src is the source ${real}/src itself`],
      [['copy', 'src', 'src/inner'], `the target ${real}/src/inner/src is inside the source ${real}/src`],
      [['mirror', 'src', 'src/inner', '--yes'], `the target ${real}/src/inner is inside the source ${real}/src`],
      [['bisync', 'src/inner', 'src'], `the source ${real}/src/inner is inside the target ${real}/src`],
    ] as const) {
      const r = await cli(...args);
      expect(r.err, args.join(' ')).toBe(`skyferry: ${message}\n`);
      expect(r.code).toBe(EXIT.usage);
    }
    expect(await tree(join(dir, 'src'))).toEqual({ 'a.txt': 'alpha', 'docs/b.pdf': 'bravo', 'c.jpg': 'charlie' });
    // A copy of a folder into its parent's sibling is fine.
    await mkdir(join(dir, 'elsewhere'));
    expect((await cli('move', 'src/docs', 'elsewhere')).code).toBe(EXIT.ok);
    expect(await tree(join(dir, 'elsewhere'))).toEqual({ 'docs/b.pdf': 'bravo' });
  });

  it('move keeps a source file whose name on the target holds something else, and says why (exit 1)', async () => {
    await mkdir(join(dir, 'out', 'src'), { recursive: true });
    await writeFile(join(dir, 'out', 'src', 'a.txt'), 'ALPHA'); // same size, other bytes: skipped by the policy
    const r = await cli('move', 'src', 'out', '--same-name', 'skip', '--json');
    expect(r.code).toBe(EXIT.failed);
    const out = JSON.parse(r.out) as { outcome: string; moved: { deleted: number; kept: string[] } };
    expect(out.outcome).toBe('success');
    expect(out.moved).toEqual({
      deleted: 2,
      kept: ["/src/a.txt: the target's file differs (content)"],
      failed: [],
      foldersRemoved: 0,
    });
    expect(await tree(join(dir, 'src'))).toEqual({ 'a.txt': 'alpha' });
    expect(await tree(join(dir, 'out', 'src'))).toEqual({
      'a.txt': 'ALPHA',
      'docs/b.pdf': 'bravo',
      'c.jpg': 'charlie',
    });
  });

  it('check refuses the options of a transfer, and the transfers refuse those of check (exit 2)', async () => {
    await mkdir(join(dir, 'out'));
    for (const [args, message] of [
      [['check', 'src', 'out', '--yes'], '--yes does not apply to check'],
      [['check', 'src', 'out', '--dry-run'], '--dry-run does not apply to check'],
      [['copy', 'src', 'out', '--delete-empty-src-dirs'], '--delete-empty-src-dirs applies to move only'],
      [['check', 'src'], 'usage: skyferry check <source> <target>'],
      [['check', 'src', 'out', '--checkers', '0'], '--checkers: "0" is not a whole number from 1 to 256'],
      [['copy', 'src', 'out', '--download'], '--download applies to check and move only'],
      [['sync', 'src', 'out', '--one-way'], '--one-way applies to check only'],
    ] as const) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(EXIT.usage);
      expect(r.err).toBe(`skyferry: ${message}\n`);
    }
    expect(await readdir(join(dir, 'out'))).toEqual([]);
  });

  it('ls lists folders first, then files with their sizes', async () => {
    const r = await cli('ls', 'src');
    expect(r.code).toBe(EXIT.ok);
    expect(
      r.out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.trim().split(/\s+/).at(-1)),
    ).toEqual(['docs/', 'a.txt', 'c.jpg']);
    expect(r.out).toMatch(/^ +- +\d{4}-\d\d-\d\d \d\d:\d\d +docs\/$/m);
    expect(r.out).toMatch(/^ +7 B +\d{4}-\d\d-\d\d \d\d:\d\d +c\.jpg$/m);
  });

  it('ls of a file shows that file; of nothing, not_found with exit 1', async () => {
    const file = await cli('ls', 'src/a.txt', '--json');
    expect(file.code).toBe(EXIT.ok);
    expect(JSON.parse(file.out)).toMatchObject([{ name: 'a.txt', kind: 'file', size: 5 }]);
    const missing = await cli('ls', 'src/nothing');
    expect(missing.code).toBe(EXIT.failed);
    expect(missing.err).toMatch(/^skyferry: not_found: /);
  });
});

describe('bisync and mirror never lose a file they did not judge', () => {
  it('a folder deleted on one side takes only the files listed and judged on the other: a file the filter hides stays', async () => {
    await mkdir(join(dir, 'a', 'X'), { recursive: true });
    await mkdir(join(dir, 'a', 'keep'), { recursive: true });
    await writeFile(join(dir, 'a', 'X', 'report.txt'), 'r');
    await writeFile(join(dir, 'a', 'keep', 'k.txt'), 'k');
    await mkdir(join(dir, 'b'));
    expect((await cli('bisync', 'a', 'b', '--include', 'text')).code).toBe(EXIT.ok);
    await writeFile(join(dir, 'b', 'X', 'photo.jpg'), 'p');
    expect((await cli('bisync', 'a', 'b', '--include', 'text')).code).toBe(EXIT.ok);
    await rm(join(dir, 'a', 'X'), { recursive: true });
    const r = await cli('bisync', 'a', 'b', '--include', 'text', '--no-trash', '--yes');
    expect(r.code).toBe(EXIT.ok);
    // report.txt was listed and judged deleted on a; photo.jpg was never judged (the filter hid it).
    expect(await tree(join(dir, 'b'))).toEqual({ 'X/photo.jpg': 'p', 'keep/k.txt': 'k' });
  });
});

describe('bisync stops when a side is missing or emptied, whatever the confirmation', () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'a', 'docs'), { recursive: true });
    for (const n of ['1', '2', '3']) await writeFile(join(dir, 'a', `f${n}.txt`), n);
    await writeFile(join(dir, 'a', 'docs', 'd.txt'), 'd');
    await mkdir(join(dir, 'b'));
    expect((await cli('bisync', 'a', 'b')).code).toBe(EXIT.ok);
  });
  const all = { 'f1.txt': '1', 'f2.txt': '2', 'f3.txt': '3', 'docs/d.txt': 'd' };

  it('a side whose folder is gone (a renamed folder, an unmounted disk) is no empty side: nothing changes, --resync starts over', async () => {
    await rename(join(dir, 'b'), join(dir, 'b-moved'));
    const r = await cli('bisync', 'a', 'b', '--yes');
    expect(r.code).toBe(EXIT.failed);
    expect(r.err).toMatch(/target folder .* is missing/);
    expect(await tree(join(dir, 'a'))).toEqual(all);
    const again = await cli('bisync', 'a', 'b', '--yes', '--resync');
    expect(again.code).toBe(EXIT.ok);
    expect(await tree(join(dir, 'a'))).toEqual(all);
    expect(await tree(join(dir, 'b'))).toEqual(all);
  });

  it('a side that lists no file where the last run left files stops the run: nothing is deleted on the other', async () => {
    await rm(join(dir, 'b'), { recursive: true });
    await mkdir(join(dir, 'b'));
    const r = await cli('bisync', 'a', 'b', '--yes');
    expect(r.code).toBe(EXIT.failed);
    expect(r.err).toMatch(/target lists no files where the last run left 4/);
    expect(await tree(join(dir, 'a'))).toEqual(all);
    expect((await cli('bisync', 'a', 'b', '--dry-run')).code).toBe(EXIT.failed);
  });
});

describe('what the command line tells before and after a run', () => {
  it('a file and a folder of one name: the dry run shows the conflict and its reason, the run exits 1 and says why', async () => {
    await mkdir(join(dir, 'a'));
    await writeFile(join(dir, 'a', 'x'), 'a file');
    await mkdir(join(dir, 'b', 'x'), { recursive: true });
    await writeFile(join(dir, 'b', 'x', 'inner.txt'), 'in a folder');
    const dry = await cli('mirror', 'a', 'b', '--dry-run');
    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toMatch(/^conflict +b\/x: a file and a folder have the same name/m);
    const r = await cli('mirror', 'a', 'b', '--yes');
    expect(r.code).toBe(EXIT.failed);
    expect(r.err).toMatch(/x .*kind_mismatch: a file and a folder have the same name/);
    expect(await tree(join(dir, 'b'))).toEqual({ 'x/inner.txt': 'in a folder' });
  });

  it('bisync: a folder deleted on one side loses its files on the other, never its link; done, exit 3 for the link', async () => {
    await mkdir(join(dir, 'a', 'X'), { recursive: true });
    await mkdir(join(dir, 'a', 'kept'), { recursive: true });
    await writeFile(join(dir, 'a', 'X', 'one.txt'), '1');
    await writeFile(join(dir, 'a', 'kept', 'k.txt'), 'k');
    await mkdir(join(dir, 'b'));
    expect((await cli('bisync', 'a', 'b')).code).toBe(EXIT.ok);
    await symlink('../kept', join(dir, 'b', 'X', 'sib'));
    await rm(join(dir, 'a', 'X'), { recursive: true });
    const dry = await cli('bisync', 'a', 'b', '--dry-run');
    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toContain('delete   b/X/one.txt (1 B): deleted on other side\n');
    expect(dry.out).toContain('skip     b/X/sib/: symbolic link, not followed (-L follows links)\n');
    expect(dry.out).not.toMatch(/delete +b\/X\/\n/);
    const r = await cli('bisync', 'a', 'b', '--no-trash');
    expect(r.code, r.err).toBe(EXIT.linksLeft);
    expect(r.err).toBe('skipped: b/X/sib/: symbolic link, not followed (-L follows links)\n');
    expect(await tree(join(dir, 'b'))).toEqual({ 'kept/k.txt': 'k' });
    expect((await stat(join(dir, 'b', 'X'))).isDirectory()).toBe(true);
    // -L: what the link leads to is new on b's side of X, so it is copied to a; nothing is deleted through it.
    const followed = await cli('bisync', 'a', 'b', '-L', '--no-trash');
    expect(followed.code, followed.err).toBe(EXIT.ok);
    expect(await tree(join(dir, 'b'))).toEqual({ 'kept/k.txt': 'k' });
    expect(await tree(join(dir, 'a'))).toEqual({ 'X/sib/k.txt': 'k', 'kept/k.txt': 'k' });
  });

  it('a conflict no rule resolves and a link left alone in one run: both are said, and the run exits 1 (1 wins over 3)', async () => {
    await mkdir(join(dir, 'a', 'docs'), { recursive: true });
    await writeFile(join(dir, 'a', 'x'), 'a file');
    await symlink('docs', join(dir, 'a', 'docs-link'));
    await mkdir(join(dir, 'b', 'x'), { recursive: true });
    await writeFile(join(dir, 'b', 'x', 'inner.txt'), 'in a folder');
    const dry = await cli('sync', 'a', 'b', '--dry-run');
    expect(dry.code).toBe(EXIT.ok);
    expect(dry.out).toMatch(/^conflict +b\/x: a file and a folder have the same name; left alone$/m);
    expect(dry.out).toMatch(/^skip +a\/docs-link\/: symbolic link, not followed/m);
    const r = await cli('sync', 'a', 'b');
    expect(r.code).toBe(EXIT.failed);
    expect(r.out).toMatch(/^partial: .*, 1 failed, 1 symbolic link left alone\.$/m);
    expect(r.err).toMatch(/kind_mismatch: a file and a folder have the same name/);
    expect(r.err).toContain('skipped: a/docs-link/: symbolic link, not followed (-L follows links)\n');
    expect(await tree(join(dir, 'b'))).toEqual({ 'x/inner.txt': 'in a folder' });
  });

  it('the deletion prompt counts files, of the files on that side', async () => {
    await mkdir(join(dir, 'a'));
    for (const n of ['k1', 'k2', 'k3']) await writeFile(join(dir, 'a', n), n);
    await mkdir(join(dir, 'b', 'old'), { recursive: true });
    for (const n of ['k1', 'k2', 'k3']) await writeFile(join(dir, 'b', n), n);
    for (let i = 0; i < 50; i++) await writeFile(join(dir, 'b', 'old', `f${i}`), `${i}`);
    const dry = await cli('mirror', 'a', 'b', '--dry-run');
    expect(dry.out).toMatch(/This deletes 50 of 53 files on the target: the run needs --yes to confirm\./);
    const r = await cli('mirror', 'a', 'b');
    expect(r.code).toBe(EXIT.failed);
    expect(r.err).toMatch(/Nothing was done: this would delete 50 of 53 files on the target\./);
  });
});
