/**
 * The clean-up commands over the engine's clean-up scan (one listing; duplicates told apart by a
 * service hash, then by reading only files that share their size with another):
 * `size` and `tree` (how much a folder holds, and where), `rmdirs` (remove empty folders) and
 * `dedupe` (remove copies of files with the same content, keeping one of each).
 */
import { formatBytes } from '@skyferry/contract';
import {
  CleanupMode,
  anyCopyRemains,
  removeEmptyFolder,
  removeScannedFile,
  scanForCleanup,
  walkTree,
  type CleanupScanProgress,
  type DuplicateGroup,
  type RemoveOutcome,
  type ScannedFile,
  type WalkedFile,
} from '@skyferry/engine';
import type { Provider } from '@skyferry/providers';
import { UsageError } from './errors.ts';
import { EXIT, type CliIo } from './io.ts';
import { progressPrinter } from './output.ts';
import type { Location } from './remotes.ts';

export const KEEP_POLICIES = ['first', 'newest', 'oldest'] as const;
export type KeepPolicy = (typeof KEEP_POLICIES)[number];

export interface CleanupOptions {
  dryRun: boolean;
  json: boolean;
  quiet: boolean;
  useTrash: boolean;
  keep: KeepPolicy;
  /** tree: folder levels shown (undefined: all). */
  level?: number;
}

/** A provider path as the user wrote the place (`nas:photos/a.jpg`, `./photos/a.jpg`). */
function shown(where: Location, path: string): string {
  const below = path.slice(where.path.length).replace(/^\/+/, '');
  if (!below) return where.text;
  return where.text.endsWith('/') || where.text.endsWith(':') ? `${where.text}${below}` : `${where.text}/${below}`;
}

function scanProgress(io: CliIo, o: CleanupOptions): ((p: CleanupScanProgress) => void) | undefined {
  if (o.quiet || o.json) return undefined;
  const printer = progressPrinter(io);
  return (p) =>
    p.phase === 'hashing'
      ? printer.line(
          `Reading to compare: ${formatBytes(p.hashBytesRead)} of ${formatBytes(p.hashBytesPlanned)} (${p.files} files listed)`,
        )
      : p.phase === 'finishing'
        ? printer.clear()
        : printer.line(`Listing: ${p.files} files in ${p.folders} folders (${formatBytes(p.bytes)})`);
}

function warnErrors(io: CliIo, where: Location, errors: Array<{ path: string; code: string; message: string }>): void {
  for (const e of errors) io.stderr.write(`! ${shown(where, e.path)}: ${e.code}: ${e.message}; left alone\n`);
}

export async function runCleanup(
  command: 'size' | 'tree' | 'rmdirs' | 'dedupe',
  where: Location,
  io: CliIo,
  o: CleanupOptions,
): Promise<number> {
  const provider = await where.open();
  try {
    if (command === 'rmdirs') return await rmdirs(provider, where, io, o);
    if (command === 'dedupe') return await dedupe(provider, where, io, o);
    return await usage(command, provider, where, io, o);
  } finally {
    await provider.close?.().catch(() => undefined);
  }
}

interface Node {
  name: string;
  kind: 'dir' | 'file';
  size: number;
  files: number;
  children?: Node[];
}

/** The walked tree as nested folders, each with its total size and file count, largest first. */
function treeOf(root: string, folders: Iterable<string>, files: WalkedFile[]): Node {
  const top: Node = { name: root, kind: 'dir', size: 0, files: 0, children: [] };
  const dirs = new Map<string, Node>([[root, top]]);
  const dirOf = (path: string): Node => {
    const known = dirs.get(path);
    if (known) return known;
    const cut = path.lastIndexOf('/');
    const parent = dirOf(cut <= 0 ? (root === '/' ? '/' : root) : path.slice(0, cut));
    const node: Node = { name: path.slice(cut + 1), kind: 'dir', size: 0, files: 0, children: [] };
    parent.children?.push(node);
    dirs.set(path, node);
    return node;
  };
  for (const d of folders) dirOf(d);
  for (const f of files) {
    const cut = f.path.lastIndexOf('/');
    dirOf(cut <= 0 ? '/' : f.path.slice(0, cut)).children?.push({
      name: f.path.slice(cut + 1),
      kind: 'file',
      size: f.size,
      files: 1,
    });
  }
  const total = (n: Node): void => {
    if (!n.children) return;
    for (const c of n.children) total(c);
    n.size = n.children.reduce((s, c) => s + c.size, 0);
    n.files = n.children.reduce((s, c) => s + c.files, 0);
    n.children.sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : 1));
  };
  total(top);
  return top;
}

/** The tree down to `level` folder levels (the folders below keep their totals, not their contents). */
function prune(node: Node, level: number | undefined): Node {
  if (level === undefined || !node.children) return node;
  return {
    ...node,
    children: node.children.map((c) =>
      c.kind === 'dir' && level <= 1 ? { ...c, children: [] } : prune(c, level === undefined ? undefined : level - 1),
    ),
  };
}

function printTree(io: CliIo, node: Node, prefix: string, level: number | undefined): void {
  const children = node.children ?? [];
  for (const [i, c] of children.entries()) {
    const last = i === children.length - 1;
    const label = c.kind === 'dir' ? `${c.name}/  (${c.files} file${c.files === 1 ? '' : 's'})` : c.name;
    io.stdout.write(`${prefix}${last ? '└── ' : '├── '}${formatBytes(c.size).padStart(10)}  ${label}\n`);
    if (c.kind === 'dir' && (level === undefined || level > 1)) {
      printTree(io, c, `${prefix}${last ? '    ' : '│   '}`, level === undefined ? undefined : level - 1);
    }
  }
}

async function usage(
  command: 'size' | 'tree',
  provider: Provider,
  where: Location,
  io: CliIo,
  o: CleanupOptions,
): Promise<number> {
  const progress = scanProgress(io, o);
  let files = 0;
  const walk = await walkTree(provider, where.path, {
    concurrency: 8,
    ...(io.signal ? { signal: io.signal } : {}),
    onFolder: (current, folders, n, bytes) => {
      files = n;
      progress?.({ phase: 'listing', folders, files, bytes, current, hashBytesPlanned: 0, hashBytesRead: 0 });
    },
  });
  progress?.({ phase: 'finishing', folders: 0, files, bytes: 0, current: '', hashBytesPlanned: 0, hashBytesRead: 0 });
  warnErrors(io, where, walk.errors);
  const code = walk.errors.length > 0 ? EXIT.failed : EXIT.ok;
  if (command === 'size') {
    const bytes = walk.files.reduce((n, f) => n + f.size, 0);
    if (o.json) {
      io.stdout.write(
        JSON.stringify({ files: walk.files.length, folders: walk.folders.size, bytes, errors: walk.errors }) + '\n',
      );
    } else {
      io.stdout.write(
        `${walk.files.length} files in ${walk.folders.size} folders: ${formatBytes(bytes)} (${bytes} bytes)` +
          `${walk.errors.length ? `; ${walk.errors.length} folders could not be listed` : ''}\n`,
      );
    }
    return code;
  }
  const tree = treeOf(where.path, walk.folders.keys(), walk.files);
  tree.name = where.text;
  if (o.json) {
    io.stdout.write(JSON.stringify({ ...prune(tree, o.level), errors: walk.errors }) + '\n');
    return code;
  }
  io.stdout.write(`${formatBytes(tree.size).padStart(10)}  ${where.text}  (${tree.files} files)\n`);
  printTree(io, tree, '', o.level);
  return code;
}

function outcomeText(r: RemoveOutcome): string {
  return r.ok ? (r.alreadyGone ? 'already gone' : r.trashed ? 'to the trash' : 'deleted') : r.message;
}

async function rmdirs(provider: Provider, where: Location, io: CliIo, o: CleanupOptions): Promise<number> {
  const progress = scanProgress(io, o);
  const scan = await scanForCleanup({
    provider,
    root: where.path,
    modes: CleanupMode.emptyFolders,
    ...(io.signal ? { signal: io.signal } : {}),
    ...(progress ? { onProgress: progress } : {}),
  });
  warnErrors(io, where, scan.errors);
  const results: Array<{ path: string; nested: number; outcome?: RemoveOutcome }> = [];
  for (const f of scan.emptyFolders) {
    const outcome = o.dryRun
      ? undefined
      : await removeEmptyFolder(provider, f.path, {
          useTrash: o.useTrash,
          ...(io.signal ? { signal: io.signal } : {}),
        });
    results.push({ path: f.path, nested: f.nestedCount, ...(outcome ? { outcome } : {}) });
    if (!o.json) {
      const nested = f.nestedCount ? ` (and ${f.nestedCount} empty folders inside)` : '';
      io.stdout.write(
        `${o.dryRun ? 'would remove' : outcome?.ok ? 'removed' : 'kept'} ${shown(where, f.path)}/${nested}` +
          `${outcome ? `: ${outcomeText(outcome)}` : ''}\n`,
      );
    }
  }
  const failed = results.filter((r) => r.outcome && !r.outcome.ok).length;
  const gone = results.reduce((n, r) => n + (r.outcome?.ok ? r.nested + 1 : 0), 0);
  if (o.json) {
    io.stdout.write(
      JSON.stringify({
        dryRun: o.dryRun,
        emptyFolders: results.map((r) => ({
          path: shown(where, r.path),
          nested: r.nested,
          ...(r.outcome ? { removed: r.outcome.ok, detail: outcomeText(r.outcome) } : {}),
        })),
        total: scan.emptyFolderTotal,
        errors: scan.errors,
      }) + '\n',
    );
  } else {
    io.stdout.write(
      `${o.dryRun ? 'Dry run, nothing changed: would remove' : 'Removed'} ${o.dryRun ? scan.emptyFolderTotal : gone}` +
        ` empty folders${failed ? `; ${failed} kept (not empty any more, or could not be removed)` : ''}.\n`,
    );
  }
  return failed > 0 || scan.errors.length > 0 ? EXIT.failed : EXIT.ok;
}

/** The copy a group keeps: the first by path, the newest or the oldest (then the first by path). */
function keeper(group: DuplicateGroup, keep: KeepPolicy): ScannedFile {
  const files = group.files;
  if (keep === 'first') return files[0] as ScannedFile;
  const time = (f: ScannedFile) => f.modTime ?? (keep === 'newest' ? -Infinity : Infinity);
  return files.reduce((best, f) => ((keep === 'newest' ? time(f) > time(best) : time(f) < time(best)) ? f : best));
}

async function dedupe(provider: Provider, where: Location, io: CliIo, o: CleanupOptions): Promise<number> {
  const progress = scanProgress(io, o);
  const scan = await scanForCleanup({
    provider,
    root: where.path,
    modes: CleanupMode.duplicates,
    ...(io.signal ? { signal: io.signal } : {}),
    ...(progress ? { onProgress: progress } : {}),
  });
  warnErrors(io, where, scan.errors);
  let removed = 0;
  let freed = 0;
  let failed = 0;
  const groups = [];
  for (const g of scan.duplicateGroups) {
    const kept = keeper(g, o.keep);
    const others = g.files.filter((f) => f !== kept);
    const results: Array<{ path: string; outcome?: RemoveOutcome }> = [];
    if (!o.json) {
      io.stdout.write(
        `${formatBytes(g.size)} x ${g.files.length} (${g.method === 'service_hash' ? g.key : 'same content'}):\n`,
      );
      io.stdout.write(`  ${'keep'.padEnd(12)}  ${shown(where, kept.path)}\n`);
    }
    for (const f of others) {
      let outcome: RemoveOutcome | undefined;
      if (!o.dryRun) {
        // Removed only while the kept copy is still there as scanned: one copy always remains.
        outcome = (await anyCopyRemains(provider, [kept], io.signal))
          ? await removeScannedFile(provider, f, { useTrash: o.useTrash, ...(io.signal ? { signal: io.signal } : {}) })
          : { ok: false, reason: 'changed', message: `the kept copy ${kept.path} changed or is gone` };
        if (outcome.ok) {
          removed++;
          freed += f.size;
        } else failed++;
      }
      results.push({ path: f.path, ...(outcome ? { outcome } : {}) });
      if (!o.json) {
        const verb = o.dryRun ? 'would remove' : outcome?.ok ? 'removed' : 'kept';
        io.stdout.write(`  ${verb.padEnd(12)}  ${shown(where, f.path)}${outcome ? `: ${outcomeText(outcome)}` : ''}\n`);
      }
    }
    groups.push({
      size: g.size,
      key: g.key,
      method: g.method,
      keep: shown(where, kept.path),
      remove: results.map((r) => ({
        path: shown(where, r.path),
        ...(r.outcome ? { removed: r.outcome.ok, detail: outcomeText(r.outcome) } : {}),
      })),
    });
  }
  const extra = scan.duplicateGroups.reduce((n, g) => n + (g.files.length - 1) * g.size, 0);
  const copies = scan.duplicateGroups.reduce((n, g) => n + g.files.length - 1, 0);
  if (o.json) {
    io.stdout.write(
      JSON.stringify({ dryRun: o.dryRun, keep: o.keep, groups, stats: scan.stats, errors: scan.errors }) + '\n',
    );
  } else if (o.dryRun) {
    io.stdout.write(
      `Dry run, nothing changed: ${scan.duplicateGroups.length} files have copies; removing the ${copies} extra copies would free ${formatBytes(extra)}` +
        ` (read ${formatBytes(scan.stats.bytesRead)} of ${formatBytes(scan.stats.bytes)} to compare).\n`,
    );
  } else {
    io.stdout.write(
      `Removed ${removed} copies (${formatBytes(freed)})${o.useTrash ? ', to the trash where the remote has one' : ''}` +
        `${failed ? `; ${failed} kept (changed since the scan, or could not be removed)` : ''}.\n`,
    );
  }
  return failed > 0 || scan.errors.length > 0 ? EXIT.failed : EXIT.ok;
}

/** `--keep` of dedupe. */
export function keepOf(value: string | undefined): KeepPolicy {
  if (value === undefined) return 'first';
  if (!(KEEP_POLICIES as readonly string[]).includes(value)) {
    throw new UsageError(`--keep: "${value}" is not one of ${KEEP_POLICIES.join(', ')}`);
  }
  return value as KeepPolicy;
}
