import { randomUUID } from 'node:crypto';
import {
  Code,
  ScheduleSwitch,
  TaskState,
  TaskType,
  isValidTimeZone,
  type CreateTaskBody,
  type FileFilter,
  type Schedule,
  type ServerTask,
  type SyncMode,
  type TaskPlan,
  type TaskPlanBody,
  type UpdateTaskBody,
} from '@skyferry/contract';
import type { Database, Kysely } from '@skyferry/db';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import { TaskTwoWayStateStore } from '../../repositories/task-run-state.ts';
import type { TaskPatch, TaskRow, TasksRepository } from '../../repositories/tasks.ts';
import type { CloudsService } from '../clouds.ts';
import { nextRunAfter } from '../scheduler/scheduler.ts';
import type { TasksService } from './tasks-service.ts';
import { checkFilter, kindInfo, narrowToMedia, parseSource, parseTarget } from './views.ts';

export interface TaskEditorOptions {
  tasks: TasksService;
  repo: TasksRepository;
  /** The database, for the task's two-way state (a plan of the edited task reads it). */
  db: Kysely<Database>;
  clouds: CloudsService;
  log: Logger;
  /** How long saving a change may spend planning to find deletions (default 10 s, as creating a task). */
  checkBudgetMs?: number;
  now?: () => number;
}

/** States with a run queued, going or stopping: what runs do cannot change then. */
const ACTIVE: readonly number[] = [TaskState.scanning, TaskState.running, TaskState.waiting, TaskState.waitingNoCancel];

/** The fields of an edit that change what runs do. */
type RunSettings = Pick<UpdateTaskBody, 'sync_mode' | 'same_name_policy' | 'filter' | 'conflict_resolution'>;

function sameFilter(a: FileFilter | null, b: FileFilter | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The Tasks page's changes to a task: Edit (name, schedule, what runs do; a change after which the
 * next run would delete files is confirmed with the plan), the plan of an edit (a dry run of the
 * task as it would be), and Duplicate.
 */
export class TaskEditor {
  private readonly o: Required<TaskEditorOptions>;

  constructor(options: TaskEditorOptions) {
    this.o = { checkBudgetMs: 10_000, now: () => Date.now(), ...options };
  }

  private async owned(userId: string, id: string): Promise<TaskRow> {
    const row = await this.o.repo.get(userId, id);
    if (!row) throw errors.notFound('task_not_found');
    return row;
  }

  /** Refuses settings that do not apply to the task's type. */
  private check(row: TaskRow, body: RunSettings): void {
    if (row.task_type === TaskType.migrate) {
      if (body.sync_mode !== undefined) throw errors.badRequest('field_not_for_task', { field: 'sync_mode' });
      if (body.conflict_resolution !== undefined) {
        throw errors.badRequest('field_not_for_task', { field: 'conflict_resolution' });
      }
    }
  }

  /** Whether the edit changes what runs do. */
  private changesRuns(row: TaskRow, body: RunSettings): boolean {
    const filter = row.filter ? (JSON.parse(row.filter) as FileFilter) : null;
    return (
      (body.sync_mode !== undefined && body.sync_mode !== row.sync_mode) ||
      (body.same_name_policy !== undefined && body.same_name_policy !== row.same_name_policy) ||
      (body.filter !== undefined && !sameFilter(body.filter, filter)) ||
      (body.conflict_resolution !== undefined && body.conflict_resolution !== row.conflict_resolution)
    );
  }

  /** The create body that plans the task as the edit would leave it (a dry run). */
  private planBody(row: TaskRow, body: RunSettings, query?: TaskPlanBody['plan_query']): CreateTaskBody {
    const from = parseSource(row);
    const to = parseTarget(row);
    const plan: CreateTaskBody = {
      task_type: row.task_type,
      from_cloud: { cloud_id: from.cloud_id, paths: from.paths },
      to_cloud: { cloud_id: to.cloud_id, path: to.path },
      same_name_policy: body.same_name_policy ?? (row.same_name_policy as CreateTaskBody['same_name_policy']),
      filter: body.filter !== undefined ? body.filter : row.filter ? (JSON.parse(row.filter) as FileFilter) : null,
      conflict_resolution:
        body.conflict_resolution ?? (row.conflict_resolution as CreateTaskBody['conflict_resolution']),
      google_docs: row.google_docs === 'skip' ? 'skip' : 'export',
      dry_run: true,
    };
    if (row.task_type === TaskType.sync) plan.sync_mode = body.sync_mode ?? ((row.sync_mode ?? 'one_way') as SyncMode);
    if (query) plan.plan_query = query;
    return plan;
  }

  private async planOf(
    userId: string,
    row: TaskRow,
    body: RunSettings,
    query?: TaskPlanBody['plan_query'],
    check?: { signal: AbortSignal; countOnly: true },
  ): Promise<TaskPlan> {
    const twoWayState = new TaskTwoWayStateStore(this.o.db, row.id);
    const data = await this.o.tasks.create(userId, this.planBody(row, body, query), undefined, {
      twoWayState,
      ...check,
    });
    if (!data.plan) throw errors.internal();
    return data.plan;
  }

  /** POST /api/tasks/{id}/plan: what the next run would do with these settings. */
  async plan(userId: string, id: string, body: TaskPlanBody): Promise<{ plan: TaskPlan }> {
    const row = await this.owned(userId, id);
    this.check(row, body);
    return { plan: await this.planOf(userId, row, body, body.plan_query) };
  }

  /** PUT /api/tasks/{id}: the Tasks page's Edit (and the spec's schedule switch). */
  async edit(
    userId: string,
    id: string,
    body: UpdateTaskBody,
    headerTimeZone: string | undefined,
  ): Promise<ServerTask> {
    const row = await this.owned(userId, id);
    this.check(row, body);
    const patch: TaskPatch = {};
    if (body.task_name !== undefined) patch.task_name = body.task_name;

    const runsChange = this.changesRuns(row, body);
    if (runsChange) {
      if (ACTIVE.includes(row.state)) throw new ApiError(Code.CONFLICT, 'task_edit_running');
      const mode = row.task_type === TaskType.sync ? (body.sync_mode ?? row.sync_mode) : null;
      // Plan within a budget: a change after which the next run would delete is confirmed first
      // (the page shows the plan); a tree too large to plan quickly is checked by the run itself.
      let plan: TaskPlan | undefined;
      try {
        // Its figures only (the deletions): the items of a large tree are not held.
        plan = await this.planOf(userId, row, body, undefined, {
          signal: AbortSignal.timeout(this.o.checkBudgetMs),
          countOnly: true,
        });
      } catch (err) {
        if (err instanceof ApiError) throw err; // the change itself is refused (photos, missing paths...)
        this.o.log.info({ err, task: id }, 'edit planned without a deletion check (planning took too long)');
      }
      if (plan && (mode === 'mirror' || mode === 'two_way') && plan.deletes.count > 0 && !body.confirm_deletions) {
        const count = plan.deletes.files || plan.deletes.count;
        const params = { count, total: count };
        throw new ApiError(Code.CONFIRM_DELETIONS, 'confirm_edit_deletions', params, params);
      }
      if (body.sync_mode !== undefined) patch.sync_mode = body.sync_mode;
      if (body.same_name_policy !== undefined) patch.same_name_policy = body.same_name_policy;
      if (body.conflict_resolution !== undefined) patch.conflict_resolution = body.conflict_resolution;
      if (body.filter !== undefined) {
        checkFilter(body.filter);
        const target = await this.o.clouds.get({ kind: 'user', userId }, parseTarget(row).cloud_id);
        const filter = kindInfo(target.kind)?.photos ? narrowToMedia(body.filter) : body.filter;
        patch.filter = filter ? JSON.stringify(filter) : null;
      }
      // A confirmed deletion holds for the next run (as a sync created with confirm_deletions).
      if (body.confirm_deletions) patch.confirm_deletes = 1;
    }

    const scheduleGiven = body.schedule !== undefined || body.time_zone !== undefined;
    if (scheduleGiven) {
      const zone = body.time_zone ?? (row.time_zone || headerTimeZone || 'UTC');
      if (!isValidTimeZone(zone)) throw errors.badRequest('schedule_invalid', { detail: `time zone ${zone}` });
      patch.time_zone = zone;
      const schedule: Schedule | null =
        body.schedule !== undefined ? body.schedule : row.schedule ? (JSON.parse(row.schedule) as Schedule) : null;
      if (schedule) {
        if (body.is_schedule !== ScheduleSwitch.off) await this.o.tasks.requireLicence(userId);
        const next = nextRunAfter(schedule, zone, this.o.now());
        if (next === null) throw errors.badRequest('schedule_in_past');
        patch.schedule = JSON.stringify(schedule);
        patch.next_run_time = next;
        patch.is_schedule = body.is_schedule ?? ScheduleSwitch.on;
      } else {
        patch.schedule = null;
        patch.next_run_time = null;
        patch.is_schedule = ScheduleSwitch.off;
      }
    }

    if (Object.keys(patch).length > 0) {
      const from = runsChange ? TASK_STATES_AT_REST : 'any';
      if (!(await this.o.repo.transition(id, from, patch, { userId }))) {
        throw new ApiError(Code.CONFLICT, 'task_edit_running');
      }
      this.o.log.info({ task: id, fields: Object.keys(patch) }, 'task edited');
    }
    // The spec's switch alone (or with a schedule already set above).
    if (body.is_schedule !== undefined && !scheduleGiven) {
      return this.o.tasks.setSchedule(userId, id, body.is_schedule);
    }
    return this.o.tasks.get(userId, id);
  }

  /**
   * POST /api/tasks/{id}/duplicate: a copy named "… (copy)" with the same clouds, paths and
   * settings, waiting to be started (state 7); its schedule, if any, is kept but switched off.
   */
  async duplicate(userId: string, id: string): Promise<ServerTask> {
    const row = await this.owned(userId, id);
    await this.o.tasks.requireLicence(userId);
    const copy = randomUUID();
    const now = this.o.now();
    await this.o.repo.insert({
      id: copy,
      user_id: userId,
      task_name: `${row.task_name.slice(0, 248)} (copy)`,
      task_type: row.task_type,
      from_cloud: row.from_cloud,
      to_cloud: row.to_cloud,
      sync_mode: row.sync_mode,
      same_name_policy: row.same_name_policy,
      filter: row.filter,
      conflict_resolution: row.conflict_resolution,
      google_docs: row.google_docs,
      schedule: row.schedule,
      time_zone: row.time_zone,
      is_schedule: ScheduleSwitch.off,
      next_run_time: null,
      state: TaskState.pending,
      run_mode: 'full',
      confirm_deletes: 0,
      job_id: null,
      run_count: 0,
      created_at: now,
      updated_at: now,
    });
    this.o.log.info({ task: copy, from: id }, 'task duplicated');
    return this.o.tasks.get(userId, copy);
  }
}

/** States a change of what runs do may be written in (none queued, going or stopping). */
const TASK_STATES_AT_REST: readonly number[] = [
  TaskState.completed,
  TaskState.failed,
  TaskState.canceled,
  TaskState.partial,
  TaskState.insufficientStorage,
  TaskState.pending,
  TaskState.notEnoughTraffic,
];
