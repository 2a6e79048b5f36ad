import type { Entry } from '@skyferry/providers';
import type { LinkIssue, PlanItem, PlanPair, Side } from './types.ts';
import { childRel, isBelow, joinRel, relOn } from './util.ts';

/**
 * Symbolic links in a plan's walk. The local disk, SFTP and FTP list a link as itself
 * (`Entry.link`). As rclone does by default, a link is not followed: its name is set aside in that
 * folder on both sides (neither it nor what the other side has under that name is copied, updated
 * or deleted) and reported as a skipped item. Asked to follow (`followLinks`), a link that resolves
 * inside its side's root is walked as what it points to, unless that would loop (it leads to a
 * folder the walk is already inside); the others are reported. Deletions never go through a link:
 * a delete below a followed link, of one, or of a folder holding one becomes a skip.
 */
export class LinkScreen {
  readonly follow: boolean;
  private readonly pairs: readonly PlanPair[];
  /** Per side: the path of each followed link to a folder, and the path it resolves to. */
  private readonly followed: Record<Side, Map<string, string>> = { source: new Map(), target: new Map() };

  constructor(follow: boolean, pairs: readonly PlanPair[]) {
    this.follow = follow;
    this.pairs = pairs;
  }

  /**
   * Screens one folder's listings (`rel` below pair `pair`; null: that side has no such folder):
   * answers them without the names set aside, and a skipped item for each link that was. Names
   * are matched by `key` (the walk's pairing key: NFC, and case where a side ignores it).
   */
  screen(
    pair: number,
    rel: string,
    lists: Record<Side, Entry[] | null>,
    key: (name: string) => string = (n) => n,
  ): { lists: Record<Side, Entry[] | null>; items: PlanItem[] } {
    if (!lists.source?.some((e) => e.link) && !lists.target?.some((e) => e.link)) return { lists, items: [] };
    const aside = new Map<string, { side: Side; e: Entry; issue: LinkIssue }>();
    for (const side of ['source', 'target'] as Side[]) {
      for (const e of lists[side] ?? []) {
        if (!e.link) continue;
        const issue = this.issueOf(side, pair, e);
        if (issue === undefined) {
          if (e.kind === 'dir') this.followed[side].set(e.path, e.link.target as string);
        } else if (!aside.has(key(e.name))) aside.set(key(e.name), { side, e, issue });
      }
    }
    if (aside.size === 0) return { lists, items: [] };
    const keep = (l: Entry[] | null) => l && l.filter((e) => !aside.has(key(e.name)));
    const items = [...aside.values()].map(({ side, e, issue }) =>
      linkItem(pair, childRel(rel, e.name), side, e, issue),
    );
    return { lists: { source: keep(lists.source), target: keep(lists.target) }, items };
  }

  /** Why a link is set aside, or undefined when it is followed. */
  private issueOf(side: Side, pair: number, e: Entry): LinkIssue | undefined {
    const link = e.link as NonNullable<Entry['link']>;
    if (!this.follow) return 'not_followed';
    if (link.broken) return link.broken;
    const target = link.target as string;
    const p = this.pairs[pair] as PlanPair;
    const root = side === 'source' ? p.source : p.target;
    if (target !== root && !isBelow(root, target)) return 'outside';
    if (e.kind !== 'dir') return undefined;
    // Following it would walk into a folder the walk is already inside (or one holding it).
    for (let at = parentOf(e.path); ; at = parentOf(at)) {
      const real = this.realPath(side, at);
      if (real === target || isBelow(target, real)) return 'loop';
      if (at === '/') return undefined;
    }
  }

  /** Where a path the walk reached resolves to, through the links it followed. */
  private realPath(side: Side, path: string): string {
    const links = this.followed[side];
    if (links.size === 0) return path;
    for (let at = path; ; at = parentOf(at)) {
      const to = links.get(at);
      if (to !== undefined) return joinRel(to, path.slice(at.length));
      if (at === '/') return path;
    }
  }

  /**
   * A delete that would go through a followed link (or remove one, or a folder holding one) is
   * turned into a skip of the link; answers whether it was.
   */
  guardDelete(item: PlanItem): boolean {
    if (item.action !== 'delete') return false;
    const links = this.followed[item.side];
    if (links.size === 0) return false;
    const p = this.pairs[item.pair] as PlanPair;
    const path = joinRel(item.side === 'source' ? p.source : p.target, relOn(item, item.side));
    for (const link of links.keys()) {
      if (link === path || isBelow(link, path) || (item.kind === 'dir' && isBelow(path, link))) {
        Object.assign(item, { action: 'skip', reason: 'symbolic_link', link: 'through_link' });
        return true;
      }
    }
    return false;
  }
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function linkItem(pair: number, rel: string, side: Side, e: Entry, link: LinkIssue): PlanItem {
  return { action: 'skip', kind: e.kind, pair, rel, side, reason: 'symbolic_link', size: 0, link };
}
