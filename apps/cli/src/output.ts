/** What the command line prints: dry-run plans, results with their failed files, and progress. */
import { formatBytes } from '@skyferry/contract';
import { relOn } from '@skyferry/engine';
import type {
  CheckProgress,
  CheckResult,
  ItemEvent,
  LinkIssue,
  PlanItem,
  TransferPlan,
  TransferProgress,
  TransferResult,
} from '@skyferry/engine';
import { EXIT, type CliIo } from './io.ts';
import type { Location } from './remotes.ts';

/** Where an item is, as the user wrote the paths: the changed side's path plus the item's place below it. */
export type Namer = (item: PlanItem) => string;

export function namer(plan: TransferPlan, sources: Location[], target: Location): Namer {
  return (item) => {
    const pair = plan.pairs[item.pair] as { source: string; target: string };
    const [root, at] =
      item.side === 'target'
        ? [pair.target, target]
        : [pair.source, sources.find((s) => pair.source.startsWith(s.path)) ?? (sources[0] as Location)];
    const rel = relOn(item, item.side);
    const below = `${root.slice(at.path.length)}${rel === '/' ? '' : rel}`.replace(/^\/+/, '');
    const text = at.text.endsWith('/') || at.text.endsWith(':') ? at.text : below ? `${at.text}/` : at.text;
    return `${text}${below}${item.kind === 'dir' && !below.endsWith('/') ? '/' : ''}`;
  };
}

/** Why a symbolic link was left alone, in words. */
const LINK_DETAIL: Record<LinkIssue, string> = {
  not_followed: 'not followed (-L follows links)',
  dangling: 'leads nowhere',
  loop: 'leads round in a loop',
  outside: 'leads out of the folder',
  through_link: 'not deleted through a symbolic link',
};

/** What a failure reason means, where its code alone says too little. */
const REASON_WORDS: Partial<Record<string, string>> = {
  source_changed: 'the file changed while it was copied; run again to copy the new version',
};

/** Why a conflict the run cannot resolve is left alone. */
const UNRESOLVED: Partial<Record<PlanItem['reason'], string>> = {
  kind_mismatch: 'a file and a folder have the same name',
  case_clash: 'names differing only in case, which a side takes for one',
  invalid_name: 'a name that is not valid UTF-8',
};

function describe(item: PlanItem, name: Namer): string {
  const unresolved = item.action === 'conflict' && !item.conflict ? UNRESOLVED[item.reason] : undefined;
  if (unresolved) return `${item.action.padEnd(8)} ${name(item)}: ${unresolved}; left alone`;
  const size = item.kind === 'file' && item.reason !== 'symbolic_link' ? ` (${formatBytes(item.size)})` : '';
  const renamed = item.conflict?.loserName ? `; the other one kept as ${item.conflict.loserName}` : '';
  const link = item.reason === 'symbolic_link' ? `, ${LINK_DETAIL[item.link ?? 'not_followed']}` : '';
  return `${item.action.padEnd(8)} ${name(item)}${size}: ${item.reason.replaceAll('_', ' ')}${link}${renamed}`;
}

/** "50 of 53 files on the target" (and the source's, where files go there too). */
function deletionText(plan: TransferPlan): string {
  return (['target', 'source'] as const)
    .filter((side) => plan.deletes.sides[side].files > 0)
    .map((side) => `${plan.deletes.sides[side].files} of ${plan.deletes.sides[side].of} files on the ${side}`)
    .join(' and ');
}

export function printPlan(plan: TransferPlan, io: CliIo, json: boolean, name: Namer, reportLinks = true): void {
  if (json) {
    io.stdout.write(JSON.stringify(plan) + '\n');
    return;
  }
  for (const item of plan.items) {
    if (item.action !== 'skip' || (reportLinks && item.reason === 'symbolic_link'))
      io.stdout.write(`${describe(item, name)}\n`);
  }
  const s = plan.summary;
  io.stdout.write(
    `Dry run, nothing changed: would copy ${s.copy.count} (${formatBytes(s.copy.bytes)}), update ${s.update.count}` +
      ` (${formatBytes(s.update.bytes)}), delete ${s.delete.count}, resolve ${s.conflict.count} conflicts,` +
      ` create ${s.mkdir.count} folders; skip ${s.skip.count}.\n`,
  );
  if (plan.deletes.needsConfirmation) {
    io.stdout.write(`This deletes ${deletionText(plan)}: the run needs --yes to confirm.\n`);
  }
  if (plan.twoWay?.firstRun) io.stdout.write('First two-way run: a merge that deletes nothing.\n');
}

/** A line for each file a run finished, failed or left (the --log-file log). */
export function itemLogger(io: CliIo, name: Namer): (e: ItemEvent) => void {
  return (e) => {
    const what = e.type === 'done' ? e.item.action : e.type;
    const size = e.item.kind === 'file' && e.bytes ? ` (${formatBytes(e.bytes)})` : '';
    const why = e.error ? `: ${e.error.code}: ${e.error.message}` : '';
    io.stderr.write(`${what} ${name(e.item)}${size}${why}\n`);
  };
}

/** Prints a run's result (`extra`: more fields of the JSON form). Answers the exit code. */
export function printResult(
  result: TransferResult,
  plan: TransferPlan,
  io: CliIo,
  json: boolean,
  extra?: Record<string, unknown>,
  /** Where to name the symbolic links left alone (each on a line); none: they are not reported. */
  linksNamed?: Namer,
): number {
  const links = linksNamed ? plan.items.filter((i) => i.reason === 'symbolic_link') : [];
  const code =
    result.outcome === 'success'
      ? links.length > 0
        ? EXIT.linksLeft
        : EXIT.ok
      : result.outcome === 'canceled'
        ? EXIT.canceled
        : EXIT.failed;
  if (json) {
    const { failed, ...rest } = result;
    io.stdout.write(
      JSON.stringify({
        ...rest,
        ...extra,
        failed: failed.map((f) => ({
          sourceFile: f.sourceFile,
          side: f.sourceSide,
          reason: f.reason,
          message: f.message,
        })),
      }) + '\n',
    );
    return code;
  }
  const s = result.summary;
  const seconds = (result.timeTakenMs / 1000).toFixed(1);
  // What a stopped run did not get to is told as one count, not as a failure of each file.
  const left = result.failed.filter((f) => f.notDone);
  // Names the run could not act on are conflicts (counted in s.conflicts), told with their reason.
  const unresolved = result.failed.filter((f) => f.conflict);
  const failed = result.failed.filter((f) => !f.notDone && !f.conflict);
  io.stdout.write(
    `${result.outcome}: ${result.successCount} of ${result.totalCount} done (${formatBytes(result.transferredBytes)} moved) in ${seconds} s;` +
      ` ${s.added} added, ${s.updated} updated, ${s.deleted} deleted, ${s.conflicts} conflicts, ${s.skipped} unchanged` +
      `${s.resumed ? `, ${s.resumed} finished by an earlier run` : ''}${failed.length ? `, ${failed.length} failed` : ''}` +
      `${left.length ? `, ${left.length} not done` : ''}` +
      `${links.length ? `, ${links.length} symbolic link${links.length === 1 ? '' : 's'} left alone` : ''}.\n`,
  );
  for (const k of result.skipped ?? []) io.stdout.write(`${k.reason.replaceAll('_', ' ')}: ${k.message}\n`);
  for (const f of unresolved) {
    const parent = f.sourceFile.parent === '/' ? '' : f.sourceFile.parent;
    io.stderr.write(
      `conflict: ${parent}/${f.sourceFile.name}: ${UNRESOLVED[f.item.reason] ?? f.message}; left alone\n`,
    );
  }
  for (const f of failed) {
    const parent = f.sourceFile.parent === '/' ? '' : f.sourceFile.parent;
    const words = REASON_WORDS[f.reason];
    io.stderr.write(
      `failed: ${parent}/${f.sourceFile.name} (${f.sourceSide}): ${f.reason}: ${f.message}${words ? ` (${words})` : ''}\n`,
    );
  }
  for (const l of links)
    io.stderr.write(`skipped: ${(linksNamed as Namer)(l)}: symbolic link, ${LINK_DETAIL[l.link ?? 'not_followed']}\n`);
  switch (result.outcome) {
    case 'needs_delete_confirmation':
      io.stderr.write(
        `Nothing was done: this would delete ${deletionText(plan)}. Check with --dry-run, then run again with --yes.\n`,
      );
      break;
    case 'insufficient_space':
      io.stderr.write(
        `Stopped: the ${result.fullSide ?? 'target'} has too little free space (${formatBytes(result.neededBytes ?? 0)} more needed).` +
          ' Free some space, or run again with --ignore-free-space.\n',
      );
      break;
    case 'canceled':
      io.stderr.write('Canceled. Run the same command again to go on where it stopped.\n');
      break;
    case 'traffic_exceeded':
      io.stderr.write('Stopped at --max-transfer: the files left would take the bytes moved past it.\n');
      break;
    case 'failed':
    case 'partial':
      if (result.error) io.stderr.write(`Stopped: ${result.error.code}: ${result.error.message}\n`);
      if (failed.length > 0) io.stderr.write('Run the same command again to retry what failed.\n');
      if (unresolved.length > 0) io.stderr.write('Rename or remove what is in conflict, then run again.\n');
      break;
    default:
      break;
  }
  return code;
}

/**
 * A check's differences, one a line marked as rclone marks them ('*' differs, '+' only on the
 * source, '-' only on the target), then what was compared; what could not be read on stderr.
 * Exit 1 when anything differs or could not be checked.
 */
export function printCheck(result: CheckResult, io: CliIo, json: boolean): number {
  const code = result.differences.length === 0 && result.errors.length === 0 ? EXIT.ok : EXIT.failed;
  if (json) {
    io.stdout.write(JSON.stringify(result) + '\n');
    return code;
  }
  const name = (path: string) => (path === '/' ? '(the file)' : path.replace(/^\//, ''));
  for (const d of result.differences) {
    const line =
      d.kind === 'missing_on_target'
        ? `+ ${name(d.path)}: only on the source`
        : d.kind === 'missing_on_source'
          ? `- ${name(d.path)}: only on the target`
          : d.kind === 'size'
            ? `* ${name(d.path)}: sizes differ (${formatBytes(d.sourceSize ?? 0)} on the source, ${formatBytes(d.targetSize ?? 0)} on the target)`
            : `* ${name(d.path)}: content differs${d.hash ? ` (${d.hash})` : ''}`;
    io.stdout.write(`${line}\n`);
  }
  for (const e of result.errors) {
    io.stderr.write(`! ${name(e.path)}${e.side ? ` (${e.side})` : ''}: ${e.code}: ${e.message}\n`);
  }
  const r = result;
  const unchecked = r.sizeOnly ? `, ${r.sizeOnly} of the same size (no common hash: --download reads them)` : '';
  io.stdout.write(
    `${r.differences.length === 0 ? 'No differences' : `${r.differences.length} difference${r.differences.length === 1 ? '' : 's'}`}` +
      `${r.errors.length ? `, ${r.errors.length} not checked` : ''}; ${r.compared} on both sides: ` +
      `${r.sameByHash} the same by hash${r.sameByContent ? `, ${r.sameByContent} by content` : ''}${unchecked}.\n`,
  );
  return code;
}

/**
 * Progress on stderr: one line rewritten in a terminal, otherwise (a log) a line every `everyMs`
 * (default 5 s; none for a run shorter than that).
 */
export function progressPrinter(
  io: CliIo,
  everyMs = 5000,
): {
  scan: (p: { folders: number; files: number; bytes: number }) => void;
  run: (p: TransferProgress) => void;
  check: (p: CheckProgress) => void;
  /** Any other progress line. */
  line: (text: string) => void;
  clear: () => void;
} {
  const tty = io.stderr.isTTY === true;
  let last = Date.now();
  let shown = false;
  const show = (line: string) => {
    const now = Date.now();
    if (!tty && now - last < everyMs) return;
    last = now;
    if (tty) {
      io.stderr.write(`\r\x1b[K${line}`);
      shown = true;
    } else io.stderr.write(`${line}\n`);
  };
  return {
    scan: (p) => show(`Loading ${p.files + p.folders} items (${formatBytes(p.bytes)})`),
    run: (p) => {
      // Still finding files (it copies while it plans): no share or time left of a total not known yet.
      if (p.counting) {
        show(
          `${formatBytes(p.transferred)} of ${formatBytes(p.length)} found so far  ${formatBytes(p.speed)}/s` +
            `  ${p.finishedCounts}/${p.totalCounts} files found so far${p.failedCounts ? `, ${p.failedCounts} failed` : ''}`,
        );
        return;
      }
      const eta = p.eta === null ? '' : `, ${Math.ceil(p.eta)} s left`;
      show(
        `${p.percentage.toFixed(0)}%  ${formatBytes(p.transferred)} of ${formatBytes(p.length)}  ${formatBytes(p.speed)}/s` +
          `  ${p.finishedCounts}/${p.totalCounts} files${p.failedCounts ? `, ${p.failedCounts} failed` : ''}${eta}`,
      );
    },
    line: show,
    check: (p) => show(`Checked ${p.compared} of ${p.pairs} pairs found so far (${p.listed} files listed)`),
    clear: () => {
      if (tty && shown) io.stderr.write('\r\x1b[K');
      shown = false;
    },
  };
}
