import { join } from 'node:path';
import { Code, LOCAL_FOLDER_NAME_PATTERN, type OperatorUser, type OperatorUsersData } from '@skyferry/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../http/errors.ts';
import type { UserRow, UsersRepository } from '../repositories/users.ts';
import type { Authorization, Caller } from './authorization.ts';

const FOLDER_NAME = new RegExp(LOCAL_FOLDER_NAME_PATTERN);

/** A unique-index violation (SQLite or PostgreSQL): another account took the folder name meanwhile. */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/i.test(e.message ?? '');
}

/**
 * The operator's use cases: the accounts of the server, and who may use local folders (each allowed
 * user in a folder of their own under every root). Every call checks the caller is the operator.
 */
export class OperatorService {
  private readonly users: UsersRepository;
  private readonly authz: Authorization;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(deps: { users: UsersRepository; authz: Authorization; log: Logger; now?: () => number }) {
    this.users = deps.users;
    this.authz = deps.authz;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
  }

  private toUser(row: UserRow, roots: readonly string[]): OperatorUser {
    return {
      uid: row.id,
      email: row.email,
      role: this.authz.roleOfAccount(row),
      created_at: row.created_at,
      local_folder: row.local_folder,
      local_roots: row.local_folder === null ? [] : roots.map((r) => join(r, row.local_folder as string)),
    };
  }

  /** GET /api/operator/users. */
  async listUsers(caller: Caller | undefined, page: number, pageSize: number): Promise<OperatorUsersData> {
    await this.authz.requireOperator(caller);
    const [total, rows, roots] = await Promise.all([
      this.users.count(),
      this.users.page((page - 1) * pageSize, pageSize),
      this.authz.allowedRoots(),
    ]);
    return { items: rows.map((r) => this.toUser(r, roots)), total, roots };
  }

  /**
   * PUT /api/operator/users/{uid}/local-folder: allows a user local folders in `<root>/<name>` (the
   * name given, the one they had, or their id), creating the folders, or takes it back. Taking it
   * back leaves the folders and their files in place; the user's local clouds stop working.
   */
  async setLocalGrant(
    caller: Caller | undefined,
    uid: string,
    input: { granted: boolean; folderName?: string },
  ): Promise<OperatorUser> {
    const operator = await this.authz.requireOperator(caller);
    const user = await this.users.findById(uid);
    if (!user) throw errors.notFound();
    let name: string | null = null;
    if (input.granted) {
      name = input.folderName ?? user.local_folder ?? user.id;
      if (!FOLDER_NAME.test(name)) throw errors.badRequest('field_invalid', { field: 'folder_name' });
      const holder = await this.users.findByLocalFolder(name);
      if (holder && holder.id !== user.id) throw new ApiError(Code.CONFLICT, 'local_folder_taken', { name });
    }
    try {
      await this.users.setLocalFolder(user.id, name, this.now());
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError(Code.CONFLICT, 'local_folder_taken', { name: name ?? '' });
      throw err;
    }
    if (name !== null) await this.authz.ownRoots(name);
    this.log.info({ operator: operator.id, user: user.id, granted: name !== null }, 'local folder grant changed');
    const updated = await this.users.findById(user.id);
    if (!updated) throw errors.notFound();
    return this.toUser(updated, await this.authz.allowedRoots());
  }
}
