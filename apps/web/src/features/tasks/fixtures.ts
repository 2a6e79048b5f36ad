import type { ServerTask, TaskDetail, TaskResult } from '@skyferry/contract';

/** A server task as the list answers it (tests only). */
export function makeTask(overrides: Partial<ServerTask> = {}): ServerTask {
  const id = overrides.id ?? 't1';
  return {
    id,
    task_name: 'Photos → Backup',
    task_type: 0,
    from_cloud: {
      cloud_id: 'c1',
      cloud_name: 'webdav',
      cloud_alias_name: 'Laptop',
      cloud_account: 'me@a',
      paths: ['/Photos'],
    },
    to_cloud: {
      cloud_id: 'c2',
      cloud_name: 'webdav',
      cloud_alias_name: 'Archive',
      cloud_account: 'me@b',
      path: '/Backup',
    },
    sync_mode: null,
    same_name_policy: 'skip',
    filter: null,
    conflict_resolution: 'keep_both',
    google_docs: 'export',
    follow_links: false,
    schedule: null,
    time_zone: 'UTC',
    state: 0,
    is_schedule: 1,
    next_run_time: null,
    duration: 65_000,
    size: 3 * 1024 * 1024,
    usage: 3 * 1024 * 1024,
    needed_size: null,
    total_counts: 10,
    finished_counts: 10,
    progress: { percentage: 100, speed: 0, transferred: 3 * 1024 * 1024, length: 3 * 1024 * 1024, eta: 0 },
    destination_clouds: [{ cloud_id: 'c2', cloud_name: 'webdav', cloud_alias_name: 'Archive', cloud_account: 'me@b' }],
    result: null,
    created_at: Date.UTC(2025, 0, 2, 10),
    started_at: Date.UTC(2025, 0, 2, 10),
    finished_at: Date.UTC(2025, 0, 2, 10, 1),
    ...overrides,
    task_id: overrides.task_id ?? id,
  };
}

export function makeDetail(overrides: Partial<TaskDetail> = {}): TaskDetail {
  return { ...makeTask(overrides), result_list: [], result_total: 0, ...overrides };
}

/** The result of a run that stopped as a whole with `error` (tests only). */
export function failedResult(error: TaskResult['error'], overrides: Partial<TaskResult> = {}): TaskResult {
  return {
    outcome: 'failed',
    success_count: 0,
    total_count: 0,
    total_size: 0,
    time_taken: 1200,
    added: 0,
    updated: 0,
    deleted: 0,
    skipped: 0,
    failed: 0,
    error,
    ...overrides,
  };
}
