import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ProviderError } from '../api/errors.ts';
import type { ChunkWriter, Entry, Provider, SrcInfo } from '../api/types.ts';
import { openLocal } from '../backends/local/local.ts';
import { cleanPath, pathSegments } from '../path.ts';
import { runConformance, type ConformanceCapabilities } from './conformance.ts';

// The capability flags of the conformance suite, held to account on a local folder whose
// provider is wrapped to behave like a service lacking them (refusing with not_supported the way
// Google Photos does). Each restricted flavour must pass the suite exactly as declared; the
// flavours together reach every branch the flags open (Google Photos reaches keep-both).

interface Restrictions {
  remove: boolean;
  rename: boolean;
  overwrite: boolean;
  nestedDirs: boolean;
  /** Only files with this extension, when set. */
  onlyExtension?: string;
}

function refuse(what: string): ProviderError {
  return new ProviderError('not_supported', `this service cannot ${what}`);
}

/** A provider that forwards to `inner` but refuses what `r` takes away. */
function restricted(inner: Provider, r: Restrictions): Provider {
  const depth = (path: string) => pathSegments(cleanPath(path)).length;
  /** Flat stores: folders only at the top, files at most one level down. */
  const checkFilePath = (path: string) => {
    if (!r.nestedDirs && depth(path) > 2) throw refuse('nest folders');
    const name = pathSegments(cleanPath(path)).at(-1) ?? '';
    if (r.onlyExtension && !name.endsWith(`.${r.onlyExtension}`)) throw refuse(`store ${name}`);
  };
  const checkNoOverwrite = async (path: string) => {
    if (r.overwrite) return;
    const existing = await inner.stat(path).catch(() => undefined);
    if (existing?.kind === 'file') throw new ProviderError('exists', `already exists: ${path}`);
  };
  const p: Provider = {
    kind: inner.kind,
    accountKey: `${inner.accountKey}:restricted`,
    features: { ...inner.features, trash: r.remove && inner.features.trash },
    hashes: inner.hashes,
    list: (dir, opts) => inner.list(dir, opts),
    stat: (path, opts) => inner.stat(path, opts),
    openRead: (path, opts) => inner.openRead(path, opts),
    async put(path: string, body: Readable, src: SrcInfo, opts) {
      try {
        checkFilePath(path);
        await checkNoOverwrite(path);
      } catch (err) {
        body.destroy();
        throw err;
      }
      return inner.put(path, body, src, opts);
    },
    async mkdir(path: string) {
      if (!r.nestedDirs && depth(path) > 1) throw refuse('nest folders');
      return inner.mkdir(path);
    },
    async remove(path: string) {
      if (!r.remove) throw refuse('delete files');
      return inner.remove(path);
    },
    async rmdir(path: string) {
      if (cleanPath(path) === '/') throw new ProviderError('permission', 'cannot remove the root');
      if (!r.remove) throw refuse('delete folders');
      return inner.rmdir(path);
    },
    async rename(path: string, newName: string): Promise<Entry> {
      if (!r.rename) throw refuse('rename');
      return inner.rename(path, newName);
    },
  };
  const checkTarget = (src: Entry, dst: string) => {
    if (src.kind === 'file') checkFilePath(dst);
    else if (!r.nestedDirs && depth(dst) > 1) throw refuse('nest folders');
  };
  if (inner.copy)
    p.copy = async (src, dst, opts) => {
      checkTarget(src, dst);
      await checkNoOverwrite(dst);
      return inner.copy!(src, dst, opts);
    };
  if (inner.move)
    p.move = async (src, dst, opts) => {
      checkTarget(src, dst);
      await checkNoOverwrite(dst);
      return inner.move!(src, dst, opts);
    };
  if (inner.about) p.about = () => inner.about!();
  if (inner.hash) p.hash = (path, type, opts) => inner.hash!(path, type, opts);
  if (inner.listRecursive) p.listRecursive = (dir, opts) => inner.listRecursive!(dir, opts);
  if (r.remove && inner.trash) p.trash = (path) => inner.trash!(path);
  if (inner.openChunkWriter) {
    p.openChunkWriter = async (path, src, opts): Promise<ChunkWriter> => {
      checkFilePath(path);
      await checkNoOverwrite(path);
      return inner.openChunkWriter!(path, src, opts);
    };
  }
  p.close = () => inner.close?.() ?? Promise.resolve();
  return p;
}

function suite(name: string, r: Restrictions, capabilities: ConformanceCapabilities): void {
  runConformance(
    name,
    async () => {
      const base = mkdtempSync(join(tmpdir(), 'skyferry-caps-'));
      const root = join(base, 'root');
      mkdirSync(root);
      mkdirSync(join(base, 'outside'));
      writeFileSync(join(base, 'outside', 'secret.png'), 'secret');
      // A link leading out of the folder: the local backend refuses it (permission).
      symlinkSync(join(base, 'outside'), join(root, 'escape'));
      const inner = await openLocal({ path: root }, { localRoots: [root] }, { chunkSize: 4 * 1024 * 1024 });
      return {
        provider: restricted(inner, r),
        forbiddenPath: '/escape/secret.png',
        cleanup: async () => rmSync(base, { recursive: true, force: true }),
      };
    },
    { pagingCount: 300, bigFileSize: 9 * 1024 * 1024, streamFileSize: 3 * 1024 * 1024, capabilities },
  );
}

suite(
  'local folder with top-level folders only (capability nestedDirs: false)',
  { remove: true, rename: true, overwrite: true, nestedDirs: false },
  { nestedDirs: false },
);

suite(
  'local folder without delete, rename, overwrite, any file type (capability flags false)',
  { remove: false, rename: false, overwrite: false, nestedDirs: true, onlyExtension: 'png' },
  { remove: false, rename: false, overwrite: false, anyFileType: false, fileExtension: 'png' },
);
