import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError, openLocal, type Provider } from '@skyferry/providers';
import { scanForCleanup } from './cleanup/index.ts';
import { runTransfer, type RunRequest } from './run.ts';
import { MemoryTwoWayStateStore } from './stores.ts';
import type { TransferMode } from './types.ts';

// Symbolic links on a real disk (links.ts): not followed unless asked, reported each one, followed
// only inside the side's root and never round a loop, and nothing is ever deleted through one.

let base: string;

function put(rel: string, text: string): void {
  const p = join(base, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text);
}

function link(rel: string, to: string): void {
  const p = join(base, rel);
  mkdirSync(dirname(p), { recursive: true });
  symlinkSync(to, p);
}

/** Every file below a folder of `base` (links as "name -> target"), sorted. */
function tree(rel: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = `${prefix}/${e.name}`;
      if (e.isSymbolicLink()) out.push(`${p} ->`);
      else if (e.isDirectory()) walk(join(dir, e.name), p);
      else out.push(p);
    }
  };
  walk(join(base, rel), '');
  return out.sort();
}

const open = (rel: string) => openLocal({ path: join(base, rel) }, { localRoots: [base] });

async function run(
  mode: TransferMode,
  source: Provider,
  target: Provider,
  more: Partial<RunRequest> = {},
  paths: { source: string; target: string } = { source: '/', target: '/' },
) {
  return runTransfer({
    source,
    target,
    mode,
    sourcePaths: [paths.source],
    targetPath: paths.target,
    confirmDeletes: true,
    useTrash: false,
    ...more,
  });
}

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'skyferry-links-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('symbolic links, not followed (the default)', () => {
  it('a "duplicate" seen through a link is no duplicate, cannot be deleted through it, and two-way runs lose nothing', async () => {
    put('a/docs/report.txt', 'the only copy');
    link('a/docs-link', 'docs');
    mkdirSync(join(base, 'b'));
    const a = await open('a');
    const b = await open('b');
    const state = new MemoryTwoWayStateStore();
    const first = await run('two_way', a, b, { twoWayState: state });
    expect(first.result.outcome).toBe('success');
    expect(first.result.setAside).toEqual([
      { side: 'source', path: '/docs-link', kind: 'dir', reason: 'symbolic_link', detail: 'not_followed' },
    ]);
    expect(tree('b')).toEqual(['/docs/report.txt']);

    // The clean-up scan does not walk through the link: the file is no duplicate of itself.
    const scan = await scanForCleanup({ provider: a });
    expect(scan.duplicateGroups).toEqual([]);
    // And nothing is deleted through the link.
    const refused = await a.remove('/docs-link/report.txt').catch((e: unknown) => e);
    expect(ProviderError.is(refused, 'permission')).toBe(true);
    expect(readFileSync(join(base, 'a/docs/report.txt'), 'utf8')).toBe('the only copy');

    const second = await run('two_way', a, b, { twoWayState: state });
    expect(second.result.outcome).toBe('success');
    expect(second.plan?.items.filter((i) => i.action === 'delete')).toEqual([]);
    expect(tree('a')).toEqual(['/docs-link ->', '/docs/report.txt']);
    expect(tree('b')).toEqual(['/docs/report.txt']);
  });

  it('a mirror never follows a link on the target, nor deletes what is under its name', async () => {
    put('src/new.txt', 'n');
    put('other/keep.txt', 'not the mirror’s');
    put('other/photo.jpg', 'not the mirror’s either');
    put('dst/old.txt', 'extra');
    link('dst/shared', '../other');
    // The server's view: one local root above both folders; the pair is /src to /dst. The filter
    // makes a mirror delete an extra folder's files one by one (it keeps what the filter hides).
    const root = await open('');
    const filter = { mode: 'include' as const, categories: ['text' as const] };
    const { result, plan } = await run('mirror', root, root, { filter }, { source: '/src', target: '/dst' });
    expect(result.outcome).toBe('success');
    expect(plan?.items.filter((i) => i.action === 'delete').map((i) => i.rel)).toEqual(['/old.txt']);
    expect(result.setAside?.map((s) => `${s.side} ${s.path} ${s.detail}`)).toEqual(['target /dst/shared not_followed']);
    expect(tree('other')).toEqual(['/keep.txt', '/photo.jpg']);
    expect(tree('dst')).toEqual(['/new.txt', '/shared ->']);
  });

  it('a link back up the tree is reported once, not copied forty levels deep', async () => {
    put('src/sub/file.txt', 'f');
    link('src/sub/up', '..');
    mkdirSync(join(base, 'dst'));
    const { result } = await run('one_way', await open('src'), await open('dst'));
    expect(result.outcome).toBe('success');
    expect(result.setAside?.map((s) => `${s.path} ${s.detail}`)).toEqual(['/sub/up not_followed']);
    expect(tree('dst')).toEqual(['/sub/file.txt']);
  });

  it('reports links that dangle, loop or leave the root, each with what is wrong', async () => {
    put('src/ok.txt', 'ok');
    link('src/dangling', 'nowhere');
    link('src/loop1', 'loop2');
    link('src/loop2', 'loop1');
    put('elsewhere/x.txt', 'x');
    link('src/leaves', '../elsewhere');
    mkdirSync(join(base, 'dst'));
    const src = await open('src');
    const dst = await open('dst');
    const dry = await run('migrate', src, dst);
    expect(dry.result.setAside?.map((s) => `${s.path} ${s.detail}`)).toEqual([
      '/dangling not_followed',
      '/leaves not_followed',
      '/loop1 not_followed',
      '/loop2 not_followed',
    ]);
    // Asked to follow, each says why it cannot be.
    const followed = await run('migrate', src, dst, { followLinks: true });
    expect(followed.result.outcome).toBe('success');
    expect(followed.result.setAside?.map((s) => `${s.path} ${s.detail}`)).toEqual([
      '/dangling dangling',
      '/leaves outside',
      '/loop1 loop',
      '/loop2 loop',
    ]);
    expect(tree('dst')).toEqual(['/ok.txt']);
  });
});

describe('symbolic links, followed (followLinks)', () => {
  it('copies what a link inside the root points to, and stops at a loop', async () => {
    put('src/docs/a.txt', 'a');
    link('src/docs-link', 'docs');
    link('src/file-link.txt', 'docs/a.txt');
    link('src/docs/up', '..');
    mkdirSync(join(base, 'dst'));
    const { result } = await run('one_way', await open('src'), await open('dst'), { followLinks: true });
    expect(result.outcome).toBe('success');
    // The loop is met twice: in the folder, and in the same folder reached through the link.
    expect(result.setAside?.map((s) => `${s.path} ${s.detail}`).sort()).toEqual([
      '/docs-link/up loop',
      '/docs/up loop',
    ]);
    expect(tree('dst')).toEqual(['/docs-link/a.txt', '/docs/a.txt', '/file-link.txt']);
    expect(readFileSync(join(base, 'dst/file-link.txt'), 'utf8')).toBe('a');
  });

  it('a mirror never deletes through a followed link on the target', async () => {
    for (const side of ['src', 'dst']) {
      put(`${side}/inside/keep.txt`, 'in both');
      put(`${side}/inside/photo.jpg`, 'in both');
    }
    link('dst/shared', 'inside');
    const root = await open('');
    const filter = { mode: 'include' as const, categories: ['text' as const] };
    const { result } = await run(
      'mirror',
      root,
      root,
      { followLinks: true, filter },
      { source: '/src', target: '/dst' },
    );
    // The link is extra on the target; deleting its files would delete /dst/inside's.
    expect(result.outcome).toBe('success');
    expect(result.setAside?.map((s) => `${s.path} ${s.detail}`)).toEqual(['/dst/shared/keep.txt through_link']);
    expect(tree('dst')).toEqual(['/inside/keep.txt', '/inside/photo.jpg', '/shared ->']);
  });

  it('never follows a link out of the pair’s root, even inside the cloud', async () => {
    put('src/new.txt', 'n');
    put('other/keep.txt', 'not the mirror’s');
    link('dst/shared', '../other');
    const root = await open('');
    const { result } = await run('mirror', root, root, { followLinks: true }, { source: '/src', target: '/dst' });
    expect(result.setAside?.map((s) => `${s.path} ${s.detail}`)).toEqual(['/dst/shared outside']);
    expect(tree('other')).toEqual(['/keep.txt']);
  });
});

describe('a symbolic link where a folder is deleted (plan/deletions.ts)', () => {
  /** "action side rel (link)" of a plan's deletes and link skips, sorted. */
  const judged = (plan: { items: { action: string; side: string; rel: string; reason: string; link?: string }[] }) =>
    plan.items
      .filter((i) => i.action === 'delete' || i.reason === 'symbolic_link')
      .map((i) => `${i.action} ${i.side} ${i.rel}${i.link ? ` ${i.link}` : ''}`)
      .sort();

  /** b: X/one.txt and X/two.txt synced from a, with two links added in b/X: one to a folder of the pair, one out of it. */
  async function twoWayWithLinksInX(followLinks: boolean) {
    put('a/X/one.txt', '1');
    put('a/X/two.txt', '2');
    put('a/kept/k.txt', 'k');
    put('elsewhere/e.txt', 'not the pair’s');
    mkdirSync(join(base, 'b'));
    const a = await open('a');
    const b = await open('b');
    const twoWayState = new MemoryTwoWayStateStore();
    expect((await run('two_way', a, b, { twoWayState })).result.outcome).toBe('success');
    link('b/X/sib', '../kept');
    link('b/X/out', '../../elsewhere');
    rmSync(join(base, 'a/X'), { recursive: true });
    return run('two_way', a, b, { twoWayState, followLinks });
  }

  it('two-way: a folder deleted on one side goes file by file on the other, and its links and the folder stay', async () => {
    const { plan, result } = await twoWayWithLinksInX(false);
    expect(result.outcome).toBe('success');
    expect(judged(plan as NonNullable<typeof plan>)).toEqual([
      'delete target /X/one.txt',
      'delete target /X/two.txt',
      'skip target /X/out not_followed',
      'skip target /X/sib not_followed',
    ]);
    expect(result.setAside?.map((s) => `${s.side} ${s.path}`)).toEqual(['target /X/out', 'target /X/sib']);
    expect(tree('b')).toEqual(['/X/out ->', '/X/sib ->', '/kept/k.txt']);
    expect(tree('a')).toEqual(['/kept/k.txt']);
    expect(tree('elsewhere')).toEqual(['/e.txt']);
  });

  it('two-way, links followed: what a link in the deleted folder leads to is new there (copied back), never deleted', async () => {
    const { plan, result } = await twoWayWithLinksInX(true);
    expect(result.outcome).toBe('success');
    expect(judged(plan as NonNullable<typeof plan>)).toEqual([
      'delete target /X/one.txt',
      'delete target /X/two.txt',
      'skip target /X/out outside',
    ]);
    expect(tree('b')).toEqual(['/X/out ->', '/X/sib ->', '/kept/k.txt']);
    expect(tree('a')).toEqual(['/X/sib/k.txt', '/kept/k.txt']);
    expect(tree('elsewhere')).toEqual(['/e.txt']);
  });

  it('two-way, links followed: the "duplicate" a link showed, deleted on the other side, is not deleted through the link', async () => {
    put('b/docs/report.txt', 'the only copy');
    link('b/docs-link', 'docs');
    mkdirSync(join(base, 'a'));
    const a = await open('a');
    const b = await open('b');
    const twoWayState = new MemoryTwoWayStateStore();
    const first = await run('two_way', a, b, { twoWayState, followLinks: true });
    expect(first.result.outcome).toBe('success');
    expect(tree('a')).toEqual(['/docs-link/report.txt', '/docs/report.txt']);
    // The user removes the "duplicate" on a.
    rmSync(join(base, 'a/docs-link'), { recursive: true });
    const { plan, result } = await run('two_way', a, b, { twoWayState, followLinks: true });
    expect(result.outcome).toBe('success');
    expect(judged(plan as NonNullable<typeof plan>)).toEqual(['skip target /docs-link/report.txt through_link']);
    expect(result.setAside?.map((s) => `${s.side} ${s.path} ${s.detail}`)).toEqual([
      'target /docs-link/report.txt through_link',
    ]);
    expect(tree('b')).toEqual(['/docs-link ->', '/docs/report.txt']);
    expect(readFileSync(join(base, 'b/docs/report.txt'), 'utf8')).toBe('the only copy');
  });

  /** A mirror whose target holds an extra folder X with a file and two links: to a folder of the target, and out of it. */
  async function mirrorOverLinksInX(followLinks: boolean) {
    put('src/kept/k.txt', 'k');
    put('dst/kept/k.txt', 'k');
    put('dst/X/one.txt', 'extra');
    link('dst/X/sib', '../kept');
    link('dst/X/out', '../../elsewhere');
    put('elsewhere/e.txt', 'not the mirror’s');
    return run('mirror', await open('src'), await open('dst'), { followLinks });
  }

  it('mirror: an extra folder holding links loses its files, keeps its links and stays', async () => {
    const { plan, result } = await mirrorOverLinksInX(false);
    expect(result.outcome).toBe('success');
    expect(judged(plan as NonNullable<typeof plan>)).toEqual([
      'delete target /X/one.txt',
      'skip target /X/out not_followed',
      'skip target /X/sib not_followed',
    ]);
    expect(tree('dst')).toEqual(['/X/out ->', '/X/sib ->', '/kept/k.txt']);
    expect(tree('elsewhere')).toEqual(['/e.txt']);
  });

  it('mirror, links followed: nothing in an extra folder is deleted through its link, and the folder stays', async () => {
    const { plan, result } = await mirrorOverLinksInX(true);
    expect(result.outcome).toBe('success');
    expect(judged(plan as NonNullable<typeof plan>)).toEqual([
      'delete target /X/one.txt',
      'skip target /X/out outside',
      'skip target /X/sib/k.txt through_link',
    ]);
    expect(tree('dst')).toEqual(['/X/out ->', '/X/sib ->', '/kept/k.txt']);
    expect(tree('elsewhere')).toEqual(['/e.txt']);
  });
});
