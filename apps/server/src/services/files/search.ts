import {
  RemoteFileType,
  SEARCH_FOLDERS_PER_CALL,
  SEARCH_MAX_FOLDERS,
  type FileItem,
  type SearchFilesData,
} from '@skyferry/contract';
import type { Provider } from '@skyferry/providers';
import { errors } from '../../http/errors.ts';
import { toFileItem } from './items.ts';

/** Where a walk goes on: the folders still to read, the page of the first one, and how many were read. */
interface WalkState {
  /** 'w': a walk; 's': the service's own search (its page token in `t`). */
  k: 'w' | 's';
  q: string[];
  t?: string;
  n: number;
}

/** The largest token answered; a longer queue is cut (the walk then says it was truncated). */
const MAX_TOKEN_CHARS = 400_000;
const PAGE_SIZE = 1000;

/** A name as compared: lower case, without accents, in one normal form. */
export function foldName(name: string): string {
  return name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().normalize('NFC');
}

function encode(state: WalkState): string {
  return Buffer.from(JSON.stringify(state)).toString('base64url');
}

function decode(token: string): WalkState {
  try {
    const s = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<WalkState>;
    const okQueue = Array.isArray(s.q) && s.q.every((p) => typeof p === 'string' && p.startsWith('/'));
    if (
      (s.k === 'w' || s.k === 's') &&
      okQueue &&
      typeof s.n === 'number' &&
      (s.t === undefined || typeof s.t === 'string')
    )
      return { k: s.k, q: s.q as string[], t: s.t, n: s.n };
  } catch {
    // Falls through to the 400 below.
  }
  throw errors.badRequest('invalid_request', { detail: 'page_token' });
}

/**
 * One step of a search below `root`: the service's own search where the provider has one, else a
 * walk of up to SEARCH_FOLDERS_PER_CALL folders (breadth first), its state carried in the token.
 */
export async function searchStep(
  provider: Provider,
  root: string,
  query: string,
  token: string | null,
  signal?: AbortSignal,
): Promise<SearchFilesData> {
  const needle = foldName(query);
  const state: WalkState = token
    ? decode(token)
    : provider.search
      ? { k: 's', q: [], n: 0 }
      : { k: 'w', q: [root], n: 0 };
  if (state.k === 's') {
    if (!provider.search) throw errors.badRequest('invalid_request', { detail: 'page_token' });
    const page = await provider.search(root, query, { pageToken: state.t, pageSize: PAGE_SIZE, signal });
    const next = page.nextPageToken ? encode({ k: 's', q: [], t: page.nextPageToken, n: state.n + 1 }) : null;
    return { items: page.entries.map(toFileItem), page_token: next, scanned: state.n + 1, truncated: false };
  }
  const found: FileItem[] = [];
  let read = 0;
  let truncated = false;
  while (state.q.length > 0 && read < SEARCH_FOLDERS_PER_CALL) {
    if (state.n >= SEARCH_MAX_FOLDERS) {
      truncated = true;
      state.q = [];
      break;
    }
    const dir = state.q[0] as string;
    const page = await provider.list(dir, { pageToken: state.t, pageSize: PAGE_SIZE, signal });
    for (const e of page.entries) {
      if (foldName(e.name).includes(needle)) found.push(toFileItem(e));
      if (e.kind === 'dir') state.q.push(e.path);
    }
    if (page.nextPageToken) {
      state.t = page.nextPageToken;
    } else {
      state.q.shift();
      state.t = undefined;
      state.n += 1;
      read += 1;
    }
  }
  let next = state.q.length > 0 ? encode(state) : null;
  while (next !== null && next.length > MAX_TOKEN_CHARS) {
    // Too many folders wait: the walk keeps the first half of them and says it was cut.
    state.q = state.q.slice(0, Math.floor(state.q.length / 2));
    truncated = true;
    next = state.q.length > 0 ? encode(state) : null;
  }
  found.sort((a, b) => (a.type === b.type ? a.path.localeCompare(b.path) : a.type === RemoteFileType.folder ? -1 : 1));
  return { items: found, page_token: next, scanned: state.n, truncated };
}
