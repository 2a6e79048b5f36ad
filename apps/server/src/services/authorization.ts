import { lstat, mkdir, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { Code, type MessageKey, type UserRole } from '@skyferry/contract';
import { dialectOf, type MetaRepository } from '@skyferry/db';
import type { Logger } from 'pino';
import { ApiError, errors } from '../http/errors.ts';
import type { UserRow, UsersRepository } from '../repositories/users.ts';

/**
 * Who may do what, decided in one place: visitors (a temporary identity), users and operators.
 * Routes and services ask here; nothing else compares roles or decides what reaches the server's
 * own disk. DECISIONS: "Operators, the local folder and private networks".
 */

/** Who is asking: an account, or a visitor's temporary identity (undefined: nobody). */
export type Caller = { userId: string } | { visitorId: string };
export type Role = 'visitor' | UserRole;

/** Cloud kinds that reach the server's own machine: never for visitors, for operators and users they allow. */
export const SERVER_MACHINE_KINDS: ReadonlySet<string> = new Set(['local']);

/** The meta key naming the account that became the operator as the install's first. */
const FIRST_OPERATOR_KEY = 'first_operator';

/** What the local-folder kind may reach for a caller. */
export type LocalAccess =
  | {
      allowed: true;
      /** `all`: every allowed root (operators); `own`: the user's own folder under each root. */
      scope: 'all' | 'own';
      /** Real paths of the folders the caller's clouds may use. */
      roots: string[];
      /** Real paths never served, whatever the roots hold: the data dir and the database files. */
      protectedPaths: string[];
    }
  | { allowed: false; error: ApiError };

export interface AuthorizationOptions {
  users: UsersRepository;
  meta: MetaRepository;
  /** SKYFERRY_ADMIN_EMAILS, lower-cased. */
  adminEmails: readonly string[];
  /** SKYFERRY_LOCAL_ROOTS (or the home-folder default). */
  localRoots: readonly string[];
  /** The roots are the home-folder default: they apply only while the install has one account. */
  localRootsDefault: boolean;
  /** Files and folders of the server itself (serverFilesOf). */
  serverFiles: readonly string[];
  log: Logger;
  now?: () => number;
}

/** The server's own files, never served by the local kind: the data dir, and a SQLite database wherever it is. */
export function serverFilesOf(config: { dataDir: string; databaseUrl: string }): string[] {
  const files = [resolve(config.dataDir)];
  if (dialectOf(config.databaseUrl) === 'sqlite') {
    const db = config.databaseUrl.replace(/^sqlite:(\/\/)?/, '');
    if (db !== ':memory:') {
      const file = resolve(db);
      files.push(file, `${file}-wal`, `${file}-shm`, `${file}-journal`);
    }
  }
  return files;
}

/** The real path of a file that may not exist yet: its folder's real path and its name. */
async function realPathOf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    try {
      return join(await realpath(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

function within(parent: string, path: string): boolean {
  return path === parent || path.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

export class Authorization {
  private readonly o: AuthorizationOptions;
  private readonly admins: ReadonlySet<string>;
  private readonly now: () => number;
  private protectedPaths: Promise<string[]> | undefined;

  constructor(options: AuthorizationOptions) {
    this.o = options;
    this.admins = new Set(options.adminEmails.map((e) => e.toLowerCase()));
    this.now = options.now ?? Date.now;
  }

  /** An account's role: stored (the first account), or named by SKYFERRY_ADMIN_EMAILS. */
  roleOfAccount(row: Pick<UserRow, 'role' | 'email'>): UserRole {
    return row.role === 'operator' || this.admins.has(row.email.toLowerCase()) ? 'operator' : 'user';
  }

  async roleOf(caller: Caller | undefined): Promise<Role> {
    if (!caller || !('userId' in caller)) return 'visitor';
    const row = await this.o.users.findById(caller.userId);
    return row ? this.roleOfAccount(row) : 'visitor';
  }

  /** The operator's account, or 140013 for a visitor and 403005 for anyone else. */
  async requireOperator(caller: Caller | undefined): Promise<UserRow> {
    if (!caller || !('userId' in caller)) throw errors.unauthenticated();
    const row = await this.o.users.findById(caller.userId);
    if (!row) throw errors.unauthenticated();
    if (this.roleOfAccount(row) !== 'operator') throw new ApiError(Code.OPERATOR_REQUIRED, 'operator_only');
    return row;
  }

  /**
   * Called once an account exists: the install's first account becomes the operator. The claim is
   * one insert into `meta`, so of two sign-ups at once exactly one wins, and an install whose first
   * account was deleted does not hand the role to whoever signs up next.
   */
  async claimFirstOperator(userId: string): Promise<boolean> {
    const holder = await this.o.meta.setIfAbsent(FIRST_OPERATOR_KEY, userId, this.now());
    if (holder !== userId) return false;
    await this.o.users.setRole(userId, 'operator', this.now());
    this.o.log.info({ user: userId }, 'first account is the operator');
    return true;
  }

  /** Another account that is an operator (stored, or by SKYFERRY_ADMIN_EMAILS), if any. */
  async otherOperator(userId: string): Promise<UserRow | undefined> {
    return this.o.users.findOtherOperator(userId, [...this.admins]);
  }

  /**
   * Deleting an operator's account. The rule: a server keeps an operator while it has accounts,
   * so the last operator names a successor (made operator here) while other accounts exist; the
   * only account of an install may go, and the install is then as new: the next sign-up becomes
   * the operator. Throws 409030 when a successor is needed and none is named, 400 when the named
   * one is not another account. Answers the successor made operator, if any.
   */
  async beforeAccountDeleted(user: UserRow, successorEmail: string | undefined): Promise<UserRow | undefined> {
    if (this.roleOfAccount(user) !== 'operator') return undefined;
    const successor = successorEmail === undefined ? undefined : await this.o.users.findByEmail(successorEmail);
    if (successorEmail !== undefined && (!successor || successor.id === user.id)) {
      throw errors.badRequest('operator_successor_unknown', { email: successorEmail });
    }
    const needed = (await this.o.users.count()) > 1 && !(await this.otherOperator(user.id));
    if (needed && !successor) throw new ApiError(Code.OPERATOR_SUCCESSOR_REQUIRED, 'operator_successor_required');
    if (!successor) return undefined;
    await this.o.users.setRole(successor.id, 'operator', this.now());
    this.o.log.info({ operator: user.id, successor: successor.id }, 'operator role handed over');
    return successor;
  }

  /** After an account is deleted: an install left without accounts lets its next sign-up become the operator. */
  async afterAccountDeleted(): Promise<void> {
    if ((await this.o.users.count()) === 0) await this.o.meta.delete(FIRST_OPERATOR_KEY);
  }

  /**
   * The folders the local kind may use now: SKYFERRY_LOCAL_ROOTS, or the home-folder default while
   * the install has a single account (a desktop or one person's server on loopback).
   */
  async allowedRoots(): Promise<string[]> {
    if (!this.o.localRootsDefault) return [...this.o.localRoots];
    return (await this.o.users.count()) <= 1 ? [...this.o.localRoots] : [];
  }

  /** Real paths of the server's own files; resolved once (the data dir exists from start). */
  serverFiles(): Promise<string[]> {
    this.protectedPaths ??= Promise.all(this.o.serverFiles.map(realPathOf)).then((real) => [
      ...new Set([...this.o.serverFiles, ...real]),
    ]);
    return this.protectedPaths;
  }

  /**
   * A user's own folder under each allowed root (`<real root>/<name>`), created when missing. A
   * name that is a link, or not a folder, or one inside the server's own files is left out.
   */
  async ownRoots(name: string): Promise<string[]> {
    const out: string[] = [];
    const serverFiles = await this.serverFiles();
    for (const root of await this.allowedRoots()) {
      const realRoot = await realpath(root).catch(() => undefined);
      if (!realRoot) continue;
      const own = join(realRoot, name);
      if (serverFiles.some((p) => within(p, own))) continue;
      await mkdir(own, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') this.o.log.warn({ err, folder: own }, 'cannot create a user folder');
      });
      const st = await lstat(own).catch(() => undefined);
      if (!st || st.isSymbolicLink() || !st.isDirectory()) {
        this.o.log.warn({ folder: own }, 'a user folder is not a plain folder; left out');
        continue;
      }
      out.push(own);
    }
    return out;
  }

  /** What the local kind may reach for this caller, or the refusal to answer (403004). */
  async localAccess(caller: Caller | undefined): Promise<LocalAccess> {
    const refuse = (key: MessageKey): LocalAccess => ({
      allowed: false,
      error: new ApiError(Code.LOCAL_FOLDER_FORBIDDEN, key),
    });
    if (!caller || !('userId' in caller)) return refuse('local_visitor_refused');
    const row = await this.o.users.findById(caller.userId);
    if (!row) return refuse('local_visitor_refused');
    const operator = this.roleOfAccount(row) === 'operator';
    if (!operator && row.local_folder === null) return refuse('local_not_granted');
    const roots = operator ? await this.allowedRoots() : await this.ownRoots(row.local_folder ?? '');
    if (roots.length === 0) return refuse('local_no_roots');
    return { allowed: true, scope: operator ? 'all' : 'own', roots, protectedPaths: await this.serverFiles() };
  }
}
