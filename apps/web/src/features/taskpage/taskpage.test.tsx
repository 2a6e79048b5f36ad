import { configure, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, type RunFile, type ServerTask, type TaskPlan, type TaskRun } from '@skyferry/contract';
import { Fail, authData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { applyAuth } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { resetSessionStore } from '../session/store.ts';
import { makeTask } from '../tasks/fixtures.ts';
import { editBody, editFormOf } from './model.ts';
import { RunPage } from './RunPage.tsx';
import { TaskPage } from './TaskPage.tsx';
import { TasksPage } from './TasksPage.tsx';

function makeRun(overrides: Partial<TaskRun> = {}): TaskRun {
  return {
    id: 'r1',
    task_id: 't1',
    kind: 'transfer',
    trigger: 'manual',
    outcome: 'success',
    started_at: Date.UTC(2025, 0, 2, 10),
    finished_at: Date.UTC(2025, 0, 2, 10, 1),
    duration: 60_000,
    counts: { added: 2 },
    listed: { added: 2 },
    total_count: 2,
    success_count: 2,
    bytes: 2048,
    size: 2048,
    speed: 34,
    compared: 0,
    same_by_hash: 0,
    same_by_content: 0,
    size_only: 0,
    error: null,
    is_latest: true,
    ...overrides,
  };
}

function file(overrides: Partial<RunFile>): RunFile {
  return {
    outcome: 'added',
    kind: 'file',
    side: 'target',
    path: '/Backup/a.txt',
    other_path: null,
    size: 10,
    reason: null,
    message: null,
    ...overrides,
  };
}

const plan = (deletes: number): TaskPlan => ({
  summary: {
    copy: { count: 1, bytes: 5 },
    update: { count: 0, bytes: 0 },
    delete: { count: deletes, bytes: 7 },
    skip: { count: 0, bytes: 0 },
    conflict: { count: 0, bytes: 0 },
    mkdir: { count: 0, bytes: 0 },
  },
  bytes_to_target: 5,
  bytes_to_source: 0,
  files_to_transfer: 1,
  deletes: { count: deletes, files: deletes, needs_confirmation: false },
  times_kept: { source: true, target: true },
  items: [
    {
      action: 'delete',
      kind: 'file',
      side: 'target',
      source_path: '/Docs/extra.txt',
      target_path: '/Backup/extra.txt',
      reason: 'extra_on_target',
      size: 7,
    },
  ],
  total_items: 1,
  errors: [],
});

function renderAt(path: string) {
  const withHost = (el: React.ReactNode) => (
    <>
      {el}
      <MessageHost />
    </>
  );
  return renderWithProviders(withHost(<div data-testid="elsewhere" />), {
    path,
    routes: [
      { path: '/tasks', element: withHost(<TasksPage />) },
      { path: '/tasks/:id', element: withHost(<TaskPage />) },
      { path: '/tasks/:id/runs/:runId', element: withHost(<RunPage />) },
    ],
  });
}

async function answer(button: string) {
  const dialog = await screen.findByRole('dialog', { name: /Please confirm/ });
  await userEvent.click(within(dialog).getByRole('button', { name: button }));
  // The next question is a new dialog: wait until this one has closed.
  await waitFor(() => expect(dialog).not.toBeInTheDocument());
}

// The pages wait for the server, a search for its pause: on a busy machine that takes more than 1 s.
configure({ asyncUtilTimeout: 5000 });

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  applyAuth(authData());
  configureSessionClient();
  messagesStore.setState({ dialogs: [], loading: 0 });
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const daily: ServerTask = makeTask({
  id: 't1',
  task_name: 'Notes sync',
  task_type: 1,
  sync_mode: 'two_way',
  schedule: { start_date: '2025-01-02 08:30:00', repeat_type: 0, hour: 8, minute: 30, second: 0 },
  is_schedule: 2,
  time_zone: 'Europe/Paris',
  next_run_time: Date.UTC(2030, 0, 3, 7, 30),
  state: 7,
  result: {
    outcome: 'partial',
    success_count: 1,
    total_count: 2,
    total_size: 5,
    time_taken: 1000,
    added: 1,
    updated: 0,
    deleted: 0,
    skipped: 0,
    failed: 1,
    conflicts: 0,
    not_done: 0,
    error: null,
  },
});

describe('the Tasks page (/tasks)', { timeout: 30_000 }, () => {
  it('lists every task with its kind, clouds, schedule with the zone, last outcome and next run; filters by state', async () => {
    const never = makeTask({ id: 't2', task_name: 'Photos → Backup', state: 7, result: null });
    const api = mockApi({
      'POST /api/tasks/list': (c) => {
        const states = (c.body as { states?: number[] }).states;
        const all = [daily, never];
        const items = states ? all.filter((x) => states.includes(x.state) && x.id === 't2') : all;
        return { items, total: items.length };
      },
    });
    renderAt('/tasks');
    const cards = await screen.findAllByTestId('task-card');
    expect(cards).toHaveLength(2);
    const first = within(cards[0] as HTMLElement);
    expect(first.getByTestId('task-link')).toHaveAttribute('href', '/tasks/t1');
    expect(first.getByTestId('task-kind')).toHaveTextContent('Two-way sync');
    expect(first.getByTestId('task-route')).toHaveTextContent('Laptop /Photos');
    expect(first.getByTestId('task-route')).toHaveTextContent('Archive /Backup');
    expect(first.getByTestId('task-schedule')).toHaveTextContent('Every day at 08:30 (Europe/Paris)');
    expect(first.getByTestId('task-next-run')).toHaveTextContent('Next run:');
    expect(first.getByTestId('run-outcome')).toHaveTextContent('Partially Success');
    expect(within(cards[1] as HTMLElement).getByTestId('task-never')).toHaveTextContent('Not run yet');
    expect(within(cards[1] as HTMLElement).getByTestId('task-schedule')).toHaveTextContent('No schedule');
    expect(api.find('POST /api/tasks/list')[0]?.body).toEqual({ page: 1, page_size: 50 });

    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'Show' }), 'Scheduled or not started');
    await waitFor(() => expect(screen.getAllByTestId('task-card')).toHaveLength(1));
    expect(api.find('POST /api/tasks/list').at(-1)?.body).toEqual({ page: 1, page_size: 50, states: [7] });
  });

  it('offers Run now, Edit, Duplicate, Verify and Delete on any task; Delete asks first', async () => {
    const done = makeTask({ id: 't3', task_name: 'Done one', state: 0 });
    const api = mockApi({
      'POST /api/tasks/list': () => ({ items: [done], total: 1 }),
      'GET /api/tasks/run/t3': () => makeTask({ id: 't3', state: 8 }),
      'POST /api/tasks/t3/duplicate': () => makeTask({ id: 't4', task_name: 'Done one (copy)', state: 7 }),
      'POST /api/tasks/t3/verify': () => makeRun({ id: 'v1', kind: 'verify', outcome: null }),
      'DELETE /api/tasks/t3': () => null,
    });
    renderAt('/tasks');
    // The menu opens once the action before it is over (its button shows a loader meanwhile).
    const open = async () => {
      await waitFor(() => expect(screen.getByTestId('task-menu')).not.toHaveAttribute('data-loading'));
      await userEvent.click(screen.getByTestId('task-menu'));
      await screen.findByTestId('action-delete');
    };
    await open();
    for (const a of ['run', 'edit', 'duplicate', 'verify', 'delete']) {
      expect(screen.getByTestId(`action-${a}`)).toBeInTheDocument();
    }
    await userEvent.click(screen.getByTestId('action-run'));
    await waitFor(() => expect(api.find('GET /api/tasks/run/t3')).toHaveLength(1));
    await open();
    await userEvent.click(screen.getByTestId('action-duplicate'));
    await waitFor(() => expect(api.find('POST /api/tasks/t3/duplicate')).toHaveLength(1));
    await open();
    await userEvent.click(screen.getByTestId('action-verify'));
    await waitFor(() => expect(api.find('POST /api/tasks/t3/verify')).toHaveLength(1));
    await open();
    await userEvent.click(screen.getByTestId('action-delete'));
    await answer('No');
    expect(api.find('DELETE /api/tasks/t3')).toHaveLength(0);
    await open();
    await userEvent.click(screen.getByTestId('action-delete'));
    await answer('Yes');
    await waitFor(() => expect(api.find('DELETE /api/tasks/t3')).toHaveLength(1));
  });

  it('offers Resync on a two-way sync stopped because a side was emptied; it asks first and runs with resync=1', async () => {
    const error = { code: 'side_emptied', message: 'the target lists no files where the last run left 4' };
    const result = { outcome: 'failed' as const, success_count: 0, total_count: 0, total_size: 0, time_taken: 0 };
    const stopped = makeTask({
      id: 't5',
      task_name: 'Two ways',
      state: 3,
      task_type: 1,
      sync_mode: 'two_way',
      result: { ...result, added: 0, updated: 0, deleted: 0, skipped: 0, failed: 0, error },
    });
    const api = mockApi({
      'POST /api/tasks/list': () => ({ items: [stopped], total: 1 }),
      'GET /api/tasks/run/t5': () => makeTask({ id: 't5', state: 8 }),
    });
    renderAt('/tasks');
    const open = async () => {
      await waitFor(() => expect(screen.getByTestId('task-menu')).not.toHaveAttribute('data-loading'));
      await userEvent.click(screen.getByTestId('task-menu'));
      await screen.findByTestId('action-resync');
    };
    await open();
    await userEvent.click(screen.getByTestId('action-resync'));
    expect(await screen.findByText(/nothing is deleted, and files deleted on one side/)).toBeInTheDocument();
    await answer('No');
    expect(api.find('GET /api/tasks/run/t5')).toHaveLength(0);
    await open();
    await userEvent.click(screen.getByTestId('action-resync'));
    await answer('Yes');
    await waitFor(() => expect(api.find('GET /api/tasks/run/t5')).toHaveLength(1));
    expect(api.find('GET /api/tasks/run/t5')[0]?.query.get('resync')).toBe('1');
  });

  it('asks a visitor to log in and asks nothing of the server', async () => {
    localStorage.clear();
    resetSessionStore();
    const api = mockApi({});
    renderAt('/tasks');
    expect(await screen.findByText('Log in to see and manage your tasks.')).toBeInTheDocument();
    expect(api.calls).toHaveLength(0);
  });
});

describe('a task’s page (/tasks/:id)', { timeout: 30_000 }, () => {
  it('shows its settings and run history; a run opens its details; Cancel replaces Run now while a run goes on', async () => {
    const running = { ...daily, state: 2, progress: { percentage: 40, speed: 1, transferred: 4, length: 10, eta: 6 } };
    mockApi({
      'GET /api/tasks/t1': () => running,
      'GET /api/tasks/t1/runs': () => ({
        items: [
          makeRun({ id: 'r2', outcome: null, trigger: 'schedule', counts: {} }),
          makeRun({ id: 'v1', kind: 'verify', outcome: 'differs', counts: { size_differs: 1 }, compared: 9 }),
          makeRun({ id: 'r1', trigger: 'manual', outcome: 'partial', counts: { added: 1, conflict: 1, failed: 1 } }),
        ],
        total: 3,
      }),
    });
    renderAt('/tasks/t1');
    expect(await screen.findByTestId('task-title')).toHaveTextContent('Notes sync');
    expect(screen.getByTestId('task-schedule')).toHaveTextContent('Every day at 08:30 (Europe/Paris)');
    expect(screen.getByText('Keep both versions')).toBeInTheDocument();
    expect(screen.getByTestId('task-progress')).toHaveTextContent('40%');
    expect(screen.getByTestId('action-cancel')).toBeInTheDocument();
    expect(screen.queryByTestId('action-run')).toBeNull();
    const rows = screen.getAllByTestId('run-row');
    expect(rows.map((r) => r.getAttribute('data-run-id'))).toEqual(['r2', 'v1', 'r1']);
    expect(within(rows[0] as HTMLElement).getByTestId('run-outcome')).toHaveTextContent('Running');
    expect(within(rows[0] as HTMLElement).getByTestId('run-trigger')).toHaveTextContent('Started by the schedule');
    expect(within(rows[1] as HTMLElement).getByTestId('run-outcome')).toHaveTextContent('Differences found');
    expect(within(rows[1] as HTMLElement).getByTestId('run-figures')).toHaveTextContent('9 compared');
    expect(within(rows[2] as HTMLElement).getByTestId('run-count-conflict')).toHaveTextContent('Conflicts: 1');
    expect(rows[2]).toHaveAttribute('href', '/tasks/t1/runs/r1');
  });

  it('says so when the task is gone', async () => {
    mockApi({
      'GET /api/tasks/gone': () => new Fail(Code.NOT_FOUND, 'The task does not exist.', 404),
      'GET /api/tasks/gone/runs': () => new Fail(Code.NOT_FOUND, 'The task does not exist.', 404),
    });
    renderAt('/tasks/gone');
    expect(await screen.findByTestId('task-missing')).toHaveTextContent('This task does not exist any more.');
  });
});

describe('a run’s details (/tasks/:id/runs/:runId)', { timeout: 30_000 }, () => {
  const partial = makeRun({
    outcome: 'partial',
    counts: { added: 250, conflict: 1, failed: 1, skipped: 3 },
    listed: { added: 200, conflict: 1, failed: 1, skipped: 3 },
  });

  it('shows the files by outcome, a conflict with both names, pages by cursor, searches, and says what is not listed', async () => {
    const api = mockApi({
      'GET /api/tasks/t1': () => ({ ...daily, state: 5 }),
      'GET /api/tasks/t1/runs/r1': () => partial,
      'GET /api/tasks/t1/runs/r1/files': (c) => {
        const outcome = c.query.get('outcome');
        const q = c.query.get('q');
        if (q) return { items: [file({ path: '/Backup/needle.txt' })], next_cursor: null, total: null };
        if (outcome === 'conflict') {
          return {
            items: [
              file({
                outcome: 'conflict',
                path: '/Backup/a.txt',
                other_path: '/Backup/a (conflict 2025-01-02 from Laptop).txt',
                reason: 'keep_both',
                side: 'source',
              }),
            ],
            next_cursor: null,
            total: 1,
          };
        }
        if (outcome === 'added') {
          const cursor = Number(c.query.get('cursor') ?? -1);
          const from = cursor + 1;
          const n = Math.min(100, 200 - from);
          return {
            items: Array.from({ length: n }, (_, i) => file({ path: `/Backup/f-${from + i}.txt` })),
            next_cursor: from + n < 200 ? from + n - 1 : null,
            total: 200,
          };
        }
        return { items: [], next_cursor: null, total: 0 };
      },
    });
    renderAt('/tasks/t1/runs/r1');
    // Conflicts come first.
    expect(await screen.findByTestId('tab-conflict')).toHaveAttribute('aria-selected', 'true');
    expect(screen.getByTestId('tab-conflict')).toHaveTextContent('Conflicts (1)');
    expect(await screen.findByTestId('run-file-path')).toHaveTextContent('/Backup/a.txt');
    expect(screen.getByTestId('run-file-other')).toHaveTextContent(
      'The other version: /Backup/a (conflict 2025-01-02 from Laptop).txt',
    );
    expect(screen.getByTestId('run-file-reason')).toHaveTextContent('Keep both versions');

    await userEvent.click(screen.getByTestId('tab-added'));
    await waitFor(() => expect(screen.getAllByTestId('run-file')).toHaveLength(100), { timeout: 5000 });
    expect(screen.getByTestId('files-range')).toHaveTextContent('1–100 of 200');
    expect(screen.getByTestId('files-not-listed')).toHaveTextContent('50 more are counted but not listed');
    await userEvent.click(screen.getByTestId('files-next'));
    await waitFor(() => expect(screen.getByTestId('files-range')).toHaveTextContent('101–200 of 200'), {
      timeout: 5000,
    });
    expect(screen.getAllByTestId('run-file-path')[0]).toHaveTextContent('/Backup/f-100.txt');
    expect(screen.getByTestId('files-next')).toBeDisabled();
    await userEvent.click(screen.getByTestId('files-previous'));
    await waitFor(() => expect(screen.getByTestId('files-range')).toHaveTextContent('1–100 of 200'), {
      timeout: 5000,
    });

    await userEvent.type(screen.getByTestId('run-search'), 'needle');
    await waitFor(() => expect(screen.getAllByTestId('run-file')).toHaveLength(1), { timeout: 5000 });
    const searched = api.find('GET /api/tasks/t1/runs/r1/files').at(-1);
    expect(searched?.query.get('q')).toBe('needle');
    expect(searched?.query.get('outcome')).toBe('added');
    // The search asks once after typing stops, not once a key.
    expect(api.find('GET /api/tasks/t1/runs/r1/files').filter((c) => c.query.get('q')).length).toBe(1);
  });

  it('Retry failed on the latest run sends the failed files again; the log downloads with the caller’s credentials', async () => {
    const api = mockApi({
      'GET /api/tasks/t1': () => ({ ...daily, state: 5 }),
      'GET /api/tasks/t1/runs/r1': () => partial,
      'GET /api/tasks/t1/runs/r1/files': () => ({
        items: [file({ outcome: 'failed', path: '/Docs/locked.txt', reason: 'permission', message: 'denied' })],
        next_cursor: null,
        total: 1,
      }),
      'GET /api/tasks/retry/t1': () => ({ ...daily, state: 8 }),
      'GET /api/tasks/t1/runs': () => ({ items: [], total: 0 }),
      'GET /api/tasks/t1/runs/r1/log': () => 'raw',
    });
    const created = vi.fn(() => 'blob:log');
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: created, revokeObjectURL: vi.fn() }));
    renderAt('/tasks/t1/runs/r1');
    await userEvent.click(await screen.findByTestId('tab-failed'));
    expect(await screen.findByTestId('run-file-reason')).toHaveTextContent('Permission denied');
    await userEvent.click(screen.getByTestId('download-log'));
    await userEvent.click(await screen.findByTestId('download-jsonl'));
    await waitFor(() => expect(created).toHaveBeenCalled());
    const log = api.find('GET /api/tasks/t1/runs/r1/log')[0];
    expect(log?.query.get('format')).toBe('jsonl');
    expect(log?.headers.authorization).toBe('Bearer access-1');
    await userEvent.click(screen.getByTestId('retry-failed'));
    await waitFor(() => expect(api.find('GET /api/tasks/retry/t1')).toHaveLength(1));
  });

  it('offers Retry on a run stopped for want of traffic (state 10), whose files were not done', async () => {
    const api = mockApi({
      'GET /api/tasks/t1': () => ({ ...daily, state: 10, needed_size: 9000 }),
      'GET /api/tasks/t1/runs/r1': () =>
        makeRun({ outcome: 'traffic_exceeded', counts: { not_done: 3 }, listed: { not_done: 3 } }),
      'GET /api/tasks/t1/runs/r1/files': () => ({ items: [], next_cursor: null, total: 0 }),
      'GET /api/tasks/retry/t1': () => ({ ...daily, state: 8 }),
      'GET /api/tasks/t1/runs': () => ({ items: [], total: 0 }),
    });
    renderAt('/tasks/t1/runs/r1');
    await userEvent.click(await screen.findByTestId('retry-failed'));
    await waitFor(() => expect(api.find('GET /api/tasks/retry/t1')).toHaveLength(1));
  });

  it('has no Retry failed on an earlier run, nor on a run without failures', async () => {
    mockApi({
      'GET /api/tasks/t1': () => ({ ...daily, state: 5 }),
      'GET /api/tasks/t1/runs/r1': () => ({ ...partial, is_latest: false }),
      'GET /api/tasks/t1/runs/r1/files': () => ({ items: [], next_cursor: null, total: 0 }),
    });
    renderAt('/tasks/t1/runs/r1');
    expect(await screen.findByTestId('run-tabs')).toBeInTheDocument();
    expect(screen.queryByTestId('retry-failed')).toBeNull();
  });
});

describe('Edit', { timeout: 30_000 }, () => {
  it('sends only what changed: name, and a schedule with the browser’s zone', () => {
    const form = editFormOf(daily);
    expect(editBody(daily, form)).toEqual({});
    expect(editBody(daily, { ...form, name: ' Renamed ' })).toEqual({ task_name: 'Renamed' });
    expect(editBody(daily, { ...form, scheduleOn: false })).toEqual({ is_schedule: 1 });
    const weekly = { start_date: '2030-01-04 06:00:00', repeat_type: 1, day_of_week: 'fri' as const, hour: 6 };
    expect(editBody(daily, { ...form, schedule: weekly, timeZone: 'Asia/Tokyo' })).toEqual({
      schedule: weekly,
      time_zone: 'Asia/Tokyo',
      is_schedule: 2,
    });
    expect(editBody(daily, { ...form, schedule: null, scheduleOn: false })).toEqual({ schedule: null });
    expect(editBody(daily, { ...form, syncMode: 'mirror' })).toEqual({ sync_mode: 'mirror' });
  });

  it('a change after which the next run deletes shows its plan first and saves once the deletions are confirmed', async () => {
    const oneWay = { ...daily, sync_mode: 'one_way' as const, state: 0 };
    const api = mockApi({
      'GET /api/tasks/t1': () => oneWay,
      'GET /api/tasks/t1/runs': () => ({ items: [], total: 0 }),
      'POST /api/tasks/t1/plan': () => ({ plan: plan(1) }),
      'PUT /api/tasks/t1': (c) => ({ ...oneWay, ...(c.body as object) }),
    });
    renderAt('/tasks/t1');
    await userEvent.click(await screen.findByTestId('action-edit'));
    const dialog = await screen.findByRole('dialog', { name: 'Edit task' });
    await userEvent.clear(within(dialog).getByTestId('edit-name'));
    await userEvent.type(within(dialog).getByTestId('edit-name'), 'Mirror of notes');
    await userEvent.click(within(dialog).getByRole('radio', { name: /One-way mirror/ }));
    expect(within(dialog).getByTestId('edit-save')).toHaveTextContent('Preview and save');
    await userEvent.click(within(dialog).getByTestId('edit-save'));
    const preview = await screen.findByTestId('plan-preview');
    expect(api.find('POST /api/tasks/t1/plan')[0]?.body).toEqual({ sync_mode: 'mirror' });
    expect(api.find('PUT /api/tasks/t1')).toHaveLength(0);
    await userEvent.click(within(preview).getByTestId('preview-start'));
    const confirmStep = await screen.findByTestId('deletions-confirm');
    expect(await within(confirmStep).findByText('/Backup/extra.txt')).toBeInTheDocument();
    await userEvent.click(within(confirmStep).getByTestId('confirm-deletions'));
    await waitFor(() => expect(api.find('PUT /api/tasks/t1')).toHaveLength(1));
    expect(api.find('PUT /api/tasks/t1')[0]?.body).toEqual({
      task_name: 'Mirror of notes',
      sync_mode: 'mirror',
      confirm_deletions: true,
    });
  });

  it("changing the file types keeps the filter's rules, sizes and ages", async () => {
    const filtered = {
      ...daily,
      sync_mode: 'one_way' as const,
      state: 0,
      filter: { mode: 'include' as const, categories: ['picture' as const], rules: ['- /cache/'], max_size: '1G' },
    };
    const api = mockApi({
      'GET /api/tasks/t1': () => filtered,
      'GET /api/tasks/t1/runs': () => ({ items: [], total: 0 }),
      'PUT /api/tasks/t1': (c) => ({ ...filtered, ...(c.body as object) }),
    });
    renderAt('/tasks/t1');
    await userEvent.click(await screen.findByTestId('action-edit'));
    const dialog = await screen.findByRole('dialog', { name: 'Edit task' });
    expect(within(dialog).getByTestId('edit-filter-rules')).toHaveTextContent('--filter "- /cache/" · --max-size 1G');
    await userEvent.click(within(dialog).getByTestId('edit-filter-pdf'));
    await userEvent.click(within(dialog).getByTestId('edit-save'));
    await waitFor(() => expect(api.find('PUT /api/tasks/t1')).toHaveLength(1));
    expect(api.find('PUT /api/tasks/t1')[0]?.body).toEqual({
      filter: { mode: 'include', categories: ['pdf', 'picture'], rules: ['- /cache/'], max_size: '1G' },
    });
  });

  it('while a run goes on, what runs do cannot be saved; the name can', async () => {
    const running = { ...daily, state: 2 };
    const api = mockApi({
      'GET /api/tasks/t1': () => running,
      'GET /api/tasks/t1/runs': () => ({ items: [], total: 0 }),
      'PUT /api/tasks/t1': (c) => ({ ...running, ...(c.body as object) }),
    });
    renderAt('/tasks/t1');
    await userEvent.click(await screen.findByTestId('action-edit'));
    const dialog = await screen.findByRole('dialog', { name: 'Edit task' });
    await userEvent.click(within(dialog).getByRole('radio', { name: /^One-way$/ }));
    expect(within(dialog).getByTestId('edit-blocked')).toBeInTheDocument();
    expect(within(dialog).getByTestId('edit-save')).toBeDisabled();
    await userEvent.click(within(dialog).getByRole('radio', { name: /^Two-way$/ }));
    await userEvent.type(within(dialog).getByTestId('edit-name'), ' 2');
    await userEvent.click(within(dialog).getByTestId('edit-save'));
    await waitFor(() => expect(api.find('PUT /api/tasks/t1')[0]?.body).toEqual({ task_name: 'Notes sync 2' }));
  });
});
