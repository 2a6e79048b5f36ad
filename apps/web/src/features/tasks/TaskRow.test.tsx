import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, formatBytes, formatDateTime, type ServerTask } from '@skyferry/contract';
import { Fail, SPOOFED, authData, cloud, mockApi, renderWithProviders, shownBidiMarks } from '../../test/utils.tsx';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { applyAuth } from '../session/actions.ts';
import { setNavigator } from '../session/navigation.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { shellStore } from '../shell/store.ts';
import { failedResult, makeDetail, makeTask } from './fixtures.ts';
import type { RowAction } from './format.ts';
import { TaskRow } from './TaskRow.tsx';
import { TransferDetailsDialog } from './TransferDetailsDialog.tsx';
import { TransmissionListDialog } from './TransmissionListDialog.tsx';
import { resetTransmission, transmission } from './store.ts';

const ACTION_BUTTONS = ['view', 'cancel', 'retry', 'restart', 'start_now', 'details'] as const;

function shownActions(): string[] {
  return ACTION_BUTTONS.filter((a) => screen.queryByTestId(`task-${a}`) !== null);
}

function renderRow(task: ServerTask, onAction = vi.fn()) {
  renderWithProviders(<TaskRow task={task} onAction={onAction} />);
  return onAction;
}

const running = { percentage: 45.6, speed: 2048, transferred: 450 * 1024, length: 1000 * 1024, eta: 3 };

beforeEach(() => {
  resetTransmission();
  localStorage.clear();
  resetSessionStore();
  applyAuth(authData());
  messagesStore.setState({ dialogs: [], loading: 0 });
});
afterEach(() => {
  transmission.stop();
  setNavigator(null);
  vi.unstubAllGlobals();
});

describe('a task row in each state (spec section 4)', () => {
  const cases: Array<{ state: number; extra?: Partial<ServerTask>; label: string; actions: string[]; text?: RegExp }> =
    [
      { state: 0, label: 'Completed', actions: ['view'], text: /Size: 3\.00 MB/ },
      { state: 1, label: 'Scanning', actions: ['cancel'], extra: { total_counts: 42 }, text: /Loading 42 items/ },
      { state: 3, label: 'Failed', actions: ['retry', 'details'], text: /Migration Failed/ },
      { state: 4, label: 'Canceled', actions: ['restart'] },
      { state: 5, label: 'Partially Success', actions: ['retry', 'details'] },
      { state: 6, label: 'Insufficient target cloud storage', actions: ['retry'] },
      { state: 7, label: 'Pending', actions: ['start_now'] },
      { state: 8, label: 'Waiting', actions: ['cancel'] },
      { state: 9, label: 'Cancelling', actions: [] },
      {
        state: 10,
        label: 'Not enough traffic',
        actions: [],
        extra: { needed_size: 5 * 1024 ** 3 },
        text: /Not enough traffic available, need 5\.00 GB in total/,
      },
    ];
  for (const c of cases) {
    it(`state ${c.state}: "${c.label}" with ${c.actions.join(', ') || 'no action'} and delete record`, () => {
      renderRow(makeTask({ state: c.state, ...c.extra }));
      const item = screen.getByTestId('task-item');
      expect(item).toHaveAttribute('data-state', String(c.state));
      expect(screen.getByTestId('task-state').textContent).toBe(c.label);
      expect(shownActions().sort()).toEqual([...c.actions].sort());
      expect(screen.getByRole('button', { name: 'Delete record' })).toBeInTheDocument();
      if (c.text) expect(item.textContent).toMatch(c.text);
    });
  }

  it('state 2 shows "Scanning" before any progress, with Cancel', () => {
    renderRow(makeTask({ state: 2, finished_counts: 0, progress: running0() }));
    expect(screen.getByTestId('task-scanning').textContent).toBe('Scanning');
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(shownActions()).toEqual(['cancel']);
  });

  it('state 2 with progress: bar, percentage, speed and amount; counts when no bytes move', () => {
    renderRow(makeTask({ state: 2, finished_counts: 3, total_counts: 7, progress: running }));
    expect(screen.getByRole('progressbar', { name: /Progress of/ })).toHaveAttribute('aria-valuenow', '45.6');
    expect(screen.getByTestId('task-percent').textContent).toBe('45%');
    expect(screen.getByTestId('task-speed').textContent).toBe('2.00 KB/s');
    expect(screen.getByTestId('task-amount').textContent).toBe('450.00 KB/1000.00 KB');
    expect(screen.getByTestId('task-state').textContent).toBe('Transferring');
  });

  it('state 2 while the run still counts: files found so far, speed and bytes moved, no percentage', () => {
    renderRow(
      makeTask({
        state: 2,
        finished_counts: 40,
        total_counts: 1200,
        progress: { ...running, percentage: 0, eta: null, counting: true },
      }),
    );
    expect(screen.getByTestId('task-counting').textContent).toContain('Counting: 1200 files so far');
    expect(screen.getByTestId('task-speed').textContent).toBe('2.00 KB/s');
    expect(screen.getByTestId('task-amount').textContent).toBe('450.00 KB');
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.queryByTestId('task-percent')).toBeNull();
    expect(shownActions()).toEqual(['cancel']);
  });

  it('state 9 (being canceled) reads "Cancelling" and keeps the progress it had, not "Waiting for a free worker"', () => {
    renderRow(makeTask({ state: 9, finished_counts: 3, total_counts: 7, progress: running }));
    expect(screen.getByTestId('task-state').textContent).toBe('Cancelling');
    expect(screen.getByRole('progressbar', { name: /Progress of/ })).toHaveAttribute('aria-valuenow', '45.6');
    expect(screen.getByTestId('task-amount').textContent).toBe('45% · 450.00 KB/1000.00 KB');
    expect(screen.getByTestId('task-item').textContent).not.toContain('Waiting for a free worker');
    expect(screen.getByTestId('task-cancelling').textContent).toContain('Cancelling');
  });

  it('state 2 deleting only shows finished/total counts', () => {
    renderRow(
      makeTask({
        state: 2,
        finished_counts: 3,
        total_counts: 7,
        progress: { percentage: 40, speed: 0, transferred: 0, length: 0, eta: null },
      }),
    );
    expect(screen.getByTestId('task-amount').textContent).toBe('3/7');
  });

  it('state 3 offers "Retransmit the failed part" and says why it failed', () => {
    renderRow(
      makeTask({
        state: 3,
        result: {
          outcome: 'failed',
          success_count: 0,
          total_count: 4,
          total_size: 0,
          time_taken: 10,
          added: 0,
          updated: 0,
          deleted: 0,
          skipped: 0,
          failed: 4,
          error: { code: 'permission', message: 'Permission denied' },
        },
      }),
    );
    expect(screen.getByTestId('task-retry')).toHaveAttribute('title', 'Retransmit the failed part');
    expect(screen.getByTestId('task-failed').textContent).toBe('Migration Failed: Permission denied');
    // Its reasons are a click away, as a partly failed task's are (MSG-25).
    expect(screen.getByTestId('task-details')).toHaveTextContent('View reasons');
  });

  it('a failed sync says "Sync Failed" (MSG-20)', () => {
    renderRow(makeTask({ state: 3, task_type: 1, sync_mode: 'two_way' }));
    expect(screen.getByTestId('task-failed').textContent).toBe('Sync Failed');
  });

  it('state 6 shows the size still needed', () => {
    renderRow(makeTask({ state: 6, needed_size: 2 * 1024 ** 2 }));
    expect(screen.getByTestId('task-insufficient').textContent).toBe(
      'Insufficient target cloud storage: 2.00 MB more is needed',
    );
  });

  it('state 7 scheduled shows the tick box and next run time; off shows "Schedule off"; unscheduled none', () => {
    const next = Date.UTC(2030, 5, 1, 8, 30);
    const schedule = { start_date: '2030-06-01 08:30:00', repeat_type: 0, hour: 8, minute: 30, second: 0 };
    const onAction = renderRow(makeTask({ state: 7, schedule, is_schedule: 2, next_run_time: next }));
    const box = screen.getByRole('checkbox', { name: 'Scheduled' });
    expect(box).toBeChecked();
    expect(screen.getByTestId('task-next-run').textContent).toBe(`Next run: ${formatDateTime(next)}`);
    box.click();
    expect(onAction).toHaveBeenCalledWith('toggle_schedule', expect.objectContaining({ id: 't1' }));
  });

  it('state 7 with the schedule off, and a task without a schedule', () => {
    const schedule = { start_date: '2030-06-01 08:30:00', repeat_type: 1, day_of_week: 'sat' as const };
    renderWithProviders(
      <>
        <TaskRow task={makeTask({ id: 'x', state: 7, schedule, is_schedule: 1 })} onAction={vi.fn()} />
        <TaskRow task={makeTask({ id: 'y', state: 7 })} onAction={vi.fn()} />
      </>,
    );
    expect(screen.getByRole('checkbox', { name: 'Scheduled' })).not.toBeChecked();
    expect(screen.getByTestId('task-next-run').textContent).toBe('Schedule off');
    expect(screen.getAllByTestId('task-schedule')).toHaveLength(1);
  });

  it('long task names are truncated to 7 + ... + 6 characters, the full name in the title', () => {
    renderRow(makeTask({ task_name: 'Holiday pictures 2024 → Archive drive' }));
    const name = screen.getByTestId('task-name');
    expect(name.textContent).toBe('Holiday... drive');
    expect(name).toHaveAttribute('title', 'Holiday pictures 2024 → Archive drive');
  });

  it('each button reports its action', async () => {
    const seen: RowAction[] = [];
    const onAction = (a: RowAction) => {
      seen.push(a);
    };
    renderWithProviders(
      <>
        <TaskRow task={makeTask({ id: 'a', state: 5 })} onAction={onAction} />
      </>,
    );
    await userEvent.click(screen.getByTestId('task-details'));
    await userEvent.click(screen.getByTestId('task-retry'));
    await userEvent.click(screen.getByTestId('task-delete'));
    expect(seen).toEqual(['details', 'retry', 'delete']);
  });
});

/** The dialog over a fake server: lists, and every task call recorded. */
function serve(running: ServerTask[], completed: ServerTask[], extra: Parameters<typeof mockApi>[0] = {}) {
  return mockApi({
    'POST /api/tasks/list': (c) => {
      const items = (c.body as { completed: number }).completed === 0 ? running : completed;
      return { items, total: items.length };
    },
    'DELETE /api/cloud-manager/cancel-transfer': () => makeTask({ state: 4 }),
    'DELETE /api/tasks/a': () => null,
    'DELETE /api/tasks/b': () => null,
    'GET /api/tasks/retry/a': () => makeTask({ id: 'a', state: 8 }),
    'GET /api/tasks/run/a': () => makeTask({ id: 'a', state: 8 }),
    'GET /api/cloud-manager/poll-progress/a': () => ({
      status: 2,
      progress: running[0]?.progress,
      total_counts: 1,
      finished_counts: 0,
    }),
    ...extra,
  });
}

/** A server whose two lists the test changes as it goes (`lists.running`, `lists.completed`). */
function liveLists(running: ServerTask[], extra: Parameters<typeof mockApi>[0] = {}) {
  const lists = { running, completed: [] as ServerTask[] };
  mockApi({
    'POST /api/tasks/list': (c) => {
      const items = (c.body as { completed: number }).completed === 0 ? lists.running : lists.completed;
      return { items, total: items.length };
    },
    ...extra,
  });
  return lists;
}

function openDialog() {
  return renderWithProviders(
    <>
      <TransmissionListDialog opened onClose={() => undefined} />
      <MessageHost />
    </>,
  );
}

async function answer(button: 'Yes' | 'No' | string) {
  const dialog = await screen.findByRole('dialog', { name: /Please confirm/ });
  await userEvent.click(within(dialog).getByRole('button', { name: button }));
}

describe('task actions in the Transmission list', () => {
  it('shows both tabs with their counts and clear all', async () => {
    serve([makeTask({ id: 'a', state: 8 })], [makeTask({ id: 'b', state: 0 }), makeTask({ id: 'c', state: 4 })]);
    openDialog();
    expect(await screen.findByText('Transferring (1)')).toBeInTheDocument();
    expect(await screen.findByText('Completed (2)')).toBeInTheDocument();
    expect(screen.getByTestId('tasks-clear-running')).toHaveTextContent('Clear all');
  });

  it('a visitor (no account, so no server tasks) sees two empty lists and nothing is asked of the server', async () => {
    localStorage.clear();
    resetSessionStore();
    const api = serve([makeTask({ id: 'a', state: 8 })], []);
    openDialog();
    expect(await screen.findByTestId('tasks-empty-running')).toHaveTextContent('There are no tasks here.');
    expect(screen.getByText('Transferring (0)')).toBeInTheDocument();
    expect(screen.getByText('Completed (0)')).toBeInTheDocument();
    expect(api.calls).toEqual([]);
  });

  it('Cancel asks "Are you sure you want to cancel the task?" and cancels only on Yes', async () => {
    const api = serve([makeTask({ id: 'a', state: 8 })], []);
    openDialog();
    await userEvent.click(await screen.findByTestId('task-cancel'));
    expect(await screen.findByText('Are you sure you want to cancel the task?')).toBeInTheDocument();
    await answer('No');
    await waitFor(() => expect(screen.queryByRole('dialog', { name: /Please confirm/ })).toBeNull());
    expect(api.find('DELETE /api/cloud-manager/cancel-transfer')).toHaveLength(0);
    await userEvent.click(screen.getByTestId('task-cancel'));
    await answer('Yes');
    await waitFor(() => expect(api.find('DELETE /api/cloud-manager/cancel-transfer')).toHaveLength(1));
    expect(api.find('DELETE /api/cloud-manager/cancel-transfer')[0]?.query.get('task_id')).toBe('a');
    // The lists are read again afterwards.
    await waitFor(() => expect(api.find('POST /api/tasks/list').length).toBeGreaterThanOrEqual(4));
  });

  it('Delete record asks "Are you sure you want to delete the task?"', async () => {
    const api = serve([], [makeTask({ id: 'b', state: 0 })]);
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-delete'));
    expect(await screen.findByText('Are you sure you want to delete the task?')).toBeInTheDocument();
    await answer('Yes');
    await waitFor(() => expect(api.find('DELETE /api/tasks/b')).toHaveLength(1));
  });

  it('Retry, Restart and Start now queue a run without asking', async () => {
    const api = serve([makeTask({ id: 'a', state: 7 })], []);
    openDialog();
    await userEvent.click(await screen.findByTestId('task-start_now'));
    await waitFor(() => expect(api.find('GET /api/tasks/run/a')).toHaveLength(1));
    expect(screen.queryByRole('dialog', { name: /Please confirm/ })).toBeNull();
  });

  it('Retry on a failed task and Restart on a canceled one', async () => {
    const failed = makeTask({ id: 'a', state: 3 });
    const api = serve([], [failed]);
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-retry'));
    await waitFor(() => expect(api.find('GET /api/tasks/retry/a')).toHaveLength(1));
  });

  it('a two-way sync stopped because a side was emptied offers Resync, which asks first and runs with resync=1', async () => {
    const result = {
      outcome: 'failed' as const,
      success_count: 0,
      total_count: 0,
      total_size: 0,
      time_taken: 0,
      added: 0,
      updated: 0,
      deleted: 0,
      skipped: 0,
      failed: 0,
      error: { code: 'side_emptied', message: 'the target lists no files where the last run left 4 (/Two)' },
    };
    const stopped = makeTask({ id: 'a', state: 3, task_type: 1, sync_mode: 'two_way', result });
    const api = serve([], [stopped]);
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    expect(await screen.findByTestId('task-failed')).toHaveTextContent('the target lists no files');
    await userEvent.click(await screen.findByTestId('task-resync'));
    expect(await screen.findByText(/nothing is deleted, and files deleted on one side/)).toBeInTheDocument();
    await answer('No');
    await waitFor(() => expect(screen.queryByRole('dialog', { name: /Please confirm/ })).toBeNull());
    expect(api.find('GET /api/tasks/run/a')).toHaveLength(0);
    await userEvent.click(screen.getByTestId('task-resync'));
    await answer('Yes');
    await waitFor(() => expect(api.find('GET /api/tasks/run/a')).toHaveLength(1));
    expect(api.find('GET /api/tasks/run/a')[0]?.query.get('resync')).toBe('1');
  });

  it('Resync is offered only for that stop of a two-way sync', () => {
    const error = { code: 'side_missing', message: 'the target folder /x is missing' };
    const base = { outcome: 'failed' as const, success_count: 0, total_count: 0, total_size: 0, time_taken: 0 };
    const result = { ...base, added: 0, updated: 0, deleted: 0, skipped: 0, failed: 0, error };
    renderRow(makeTask({ id: 'm', state: 3, task_type: 1, sync_mode: 'mirror', result }));
    renderRow(makeTask({ id: 'o', state: 3, task_type: 1, sync_mode: 'two_way', result: { ...result, error: null } }));
    expect(screen.queryByTestId('task-resync')).toBeNull();
    renderRow(makeTask({ id: 't', state: 3, task_type: 1, sync_mode: 'two_way', result }));
    expect(screen.getAllByTestId('task-resync')).toHaveLength(1);
  });

  it('Restart on a canceled task runs it again', async () => {
    const api = serve([], [makeTask({ id: 'a', state: 4 })]);
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-restart'));
    await waitFor(() => expect(api.find('GET /api/tasks/run/a')).toHaveLength(1));
  });

  it('the schedule tick box flips is_schedule between 2 and 1', async () => {
    const schedule = { start_date: '2030-06-01 08:30:00', repeat_type: 0, hour: 8, minute: 30, second: 0 };
    const task = makeTask({ id: 'a', state: 7, schedule, is_schedule: 2, next_run_time: Date.UTC(2030, 5, 1, 8, 30) });
    const api = serve([task], [], {
      'PUT /api/tasks/a': (c) => ({ ...task, is_schedule: (c.body as { is_schedule: number }).is_schedule }),
    });
    openDialog();
    const box = await screen.findByRole('checkbox', { name: 'Scheduled' });
    await userEvent.click(box);
    await waitFor(() => expect(api.find('PUT /api/tasks/a')).toHaveLength(1));
    expect(api.find('PUT /api/tasks/a')[0]?.body).toEqual({ is_schedule: 1 });
    await waitFor(() => expect(screen.getByTestId('task-next-run').textContent).toBe('Schedule off'));
    expect(screen.getByRole('checkbox', { name: 'Scheduled' })).not.toBeChecked();
  });

  it('View goes to the target cloud’s explorer at the target folder and closes the dialog', async () => {
    sessionStore.setState({ clouds: [cloud('c1'), cloud('c2')], cloudsLoaded: true });
    shellStore.setState({ transmissionOpen: true });
    const go = vi.fn();
    setNavigator(go);
    serve([], [makeTask({ id: 'b', state: 0 })]);
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-view'));
    expect(go).toHaveBeenCalledTimes(1);
    expect(go.mock.calls[0]?.[0]).toMatch(/^\/manage\/explorer\?cloud_index=1&is_open=1&_=\d+&path=%2FBackup$/);
    expect(shellStore.getState().transmissionOpen).toBe(false);
  });

  it('the detail icon opens Transfer Details: the result, failed files with reasons, and Retry all', async () => {
    const partial = makeTask({
      id: 'a',
      state: 5,
      result: {
        outcome: 'partial',
        success_count: 8,
        total_count: 10,
        total_size: 8 * 1024 * 1024,
        time_taken: 83_000,
        added: 8,
        updated: 0,
        deleted: 0,
        skipped: 0,
        failed: 2,
        error: null,
      },
    });
    const detail = makeDetail({
      ...partial,
      result_list: [
        {
          sourceFile: { name: 'a.txt', parent: '/Photos/locked' },
          source: { token_id: 'c1' },
          reason: 'permission',
          message: 'Forbidden',
        },
        {
          sourceFile: { name: 'b:c.txt', parent: '/Photos' },
          source: { token_id: 'c1' },
          reason: 'invalid_name',
          message: 'bad name',
        },
      ],
      result_total: 2,
    });
    const api = serve([], [partial], { 'GET /api/tasks/a': () => detail });
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    expect(screen.getByTestId('task-counts').textContent).toBe('8 of 10 done, 2 failed');
    await userEvent.click(screen.getByRole('button', { name: 'View reasons' }));
    const dialog = await screen.findByRole('dialog', { name: 'Transfer Details' });
    await within(dialog).findByTestId('transfer-result');
    expect(within(dialog).getByTestId('result-success').textContent).toBe('Succeeded8');
    expect(within(dialog).getByTestId('result-total').textContent).toBe('Total10');
    expect(within(dialog).getByTestId('result-size').textContent).toBe('Total size8.00 MB');
    expect(within(dialog).getByTestId('result-time').textContent).toBe('Time taken1:23');
    expect(within(dialog).getByTestId('result-source').textContent).toBe('SourceLaptop /Photos');
    expect(within(dialog).getByTestId('result-target').textContent).toBe('TargetArchive /Backup');
    const rows = within(dialog).getAllByTestId('failed-file');
    expect(rows.map((r) => r.textContent)).toEqual([
      'a.txt/Photos/lockedPermission deniedForbidden',
      'b:c.txt/PhotosThe name is not allowed on the targetbad name',
    ]);
    expect(within(dialog).getByText('2 files failed')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Retry all' }));
    await waitFor(() => expect(api.find('GET /api/tasks/retry/a')).toHaveLength(1));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Transfer Details' })).toBeNull());
  });

  it('a fully failed task (state 3) opens Transfer Details with why the run stopped and its failed files (MSG-25)', async () => {
    const error = { code: 'not_found', message: 'The source folder no longer exists' };
    const failed = makeTask({ id: 'a', state: 3, result: failedResult(error) });
    serve([], [failed], { 'GET /api/tasks/a': () => makeDetail({ ...failed, result_list: [], result_total: 0 }) });
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(screen.getByRole('button', { name: 'View reasons' }));
    const dialog = await screen.findByRole('dialog', { name: 'Transfer Details' });
    const why = await within(dialog).findByTestId('details-error');
    expect(why).toHaveTextContent('Migration Failed');
    expect(why).toHaveTextContent('The source folder no longer exists');
    expect(within(dialog).queryByText('No file failed.')).toBeNull();
  });

  it('a run started from the list that fails before any read shows it running still says "Migration Failed" (MSG-19)', async () => {
    const lists = liveLists([makeTask({ id: 'a', state: 7, task_name: 'Quick failure' })], {
      'GET /api/tasks/run/a': () => {
        // The run is over before the lists are read again.
        lists.running = [];
        lists.completed = [
          makeTask({
            id: 'a',
            state: 3,
            task_name: 'Quick failure',
            result: failedResult({ code: 'not_found', message: 'The path does not exist.' }),
          }),
        ];
        return makeTask({ id: 'a', state: 8 });
      },
    });
    openDialog();
    await userEvent.click(await screen.findByTestId('task-start_now'));
    expect(await screen.findByText('Migration Failed: The path does not exist. · Quick failure')).toBeInTheDocument();
  });

  it('clear all with unfinished tasks asks with the spec’s words and deletes every task of the list', async () => {
    let running = [makeTask({ id: 'a', state: 2, progress: running0() }), makeTask({ id: 'b', state: 7 })];
    const api = mockApi({
      'POST /api/tasks/list': (c) => {
        const items = (c.body as { completed: number }).completed === 0 ? running : [];
        return { items, total: items.length };
      },
      'DELETE /api/tasks/a': () => {
        running = running.filter((t) => t.id !== 'a');
        return null;
      },
      'DELETE /api/tasks/b': () => {
        running = running.filter((t) => t.id !== 'b');
        return null;
      },
    });
    openDialog();
    await userEvent.click(await screen.findByTestId('tasks-clear-running'));
    expect(
      await screen.findByText('Some tasks have not finished yet. Are you sure you want to clear the current tasks?'),
    ).toBeInTheDocument();
    await answer('Yes');
    await waitFor(() => expect(api.find('DELETE /api/tasks/a')).toHaveLength(1));
    expect(api.find('DELETE /api/tasks/b')).toHaveLength(1);
    expect(await screen.findByTestId('tasks-empty-running')).toBeInTheDocument();
    expect(screen.getByText('Transferring (0)')).toBeInTheDocument();
  });
});

function running0() {
  return { percentage: 0, speed: 0, transferred: 0, length: 0, eta: null };
}

describe('error codes on task actions (spec section 8)', () => {
  beforeEach(() => {
    shellStore.setState({ transmissionOpen: true });
  });

  it('4011001: "Your current license has expired." with Renew goes to /buy and closes the list', async () => {
    const go = vi.fn();
    setNavigator(go);
    serve([], [makeTask({ id: 'a', state: 3 })], {
      'GET /api/tasks/retry/a': () => new Fail(Code.LICENSE_EXPIRED, 'Your current license has expired.', 402),
    });
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-retry'));
    expect(await screen.findByText('Your current license has expired.')).toBeInTheDocument();
    await answer('Renew');
    await waitFor(() => expect(go).toHaveBeenCalledWith('/buy', undefined));
    expect(shellStore.getState().transmissionOpen).toBe(false);
  });

  it('4001001: "Insufficient transfer traffic", the data message, and Buy now goes to /buy (MSG-08)', async () => {
    const go = vi.fn();
    setNavigator(go);
    serve([], [makeTask({ id: 'a', state: 4 })], {
      'GET /api/tasks/run/a': () => new Fail(Code.TRAFFIC_INSUFFICIENT, 'insufficient', 402),
    });
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-restart'));
    const dialog = await screen.findByRole('dialog', { name: 'Insufficient transfer traffic' });
    expect(
      within(dialog).getByText(
        'Your current remaining transfer data is insufficient. You can get more additional data by purchasing a data package',
      ),
    ).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Buy now' }));
    await waitFor(() => expect(go).toHaveBeenCalledWith('/buy', undefined));
  });

  it('a watched run that stops in state 10 says "Insufficient transfer traffic" with the size needed and offers a data package (MSG-08)', async () => {
    const go = vi.fn();
    setNavigator(go);
    const lists = liveLists([makeTask({ id: 'a', state: 2, progress: running0() })], {
      'GET /api/cloud-manager/poll-progress/a': () => {
        lists.running = [];
        lists.completed = [makeTask({ id: 'a', state: 10, needed_size: 5 * 1024 ** 3 })];
        return { status: 10, progress: running0(), total_counts: 10, finished_counts: 4 };
      },
    });
    openDialog();
    const dialog = await screen.findByRole('dialog', { name: 'Insufficient transfer traffic' }, { timeout: 5000 });
    expect(
      within(dialog).getByText(`Not enough traffic available, need ${formatBytes(5 * 1024 ** 3)} in total`),
    ).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Buy a data package' }));
    await waitFor(() => expect(go).toHaveBeenCalledWith('/buy', undefined));
  });

  it('6007001: the cap message', async () => {
    serve([], [makeTask({ id: 'a', state: 4 })], {
      'GET /api/tasks/run/a': () => new Fail(Code.TRANSACTION_CAP, 'cap', 429),
    });
    openDialog();
    await userEvent.click(await screen.findByRole('tab', { name: 'Completed (1)' }));
    await userEvent.click(await screen.findByTestId('task-restart'));
    expect(
      await screen.findByText('Transaction cap exceeded, see the Caps & Alerts page to increase your cap'),
    ).toBeInTheDocument();
  });
});

describe('names with bidi controls in tasks', () => {
  const spoofed = () => {
    const base = makeTask({ id: 'a', state: 5 });
    return makeDetail({
      id: 'a',
      state: 5,
      task_name: SPOOFED.task,
      from_cloud: { ...base.from_cloud, cloud_alias_name: SPOOFED.cloud, paths: ['/In\u202Edir'] },
      to_cloud: { ...base.to_cloud, path: '/Out\u202Edir' },
      result_list: [
        {
          sourceFile: { name: SPOOFED.file, parent: '/In\u202Edir' },
          source: { token_id: 'c1' },
          reason: 'permission',
          message: 'Forbidden',
        },
      ],
      result_total: 1,
    });
  };

  it('a task row shows the task, cloud and folder names with the controls as marks, isolated', () => {
    renderRow(spoofed());
    const item = screen.getByTestId('task-item');
    expect([...item.querySelectorAll('bdi')].map((b) => b.textContent)).toEqual([
      'Backup[U+2067] nightly',
      'Bank[U+202E]txt.exe',
      'Archive',
      '/Out[U+202E]dir',
    ]);
    expect(screen.getByTestId('task-name')).toHaveAttribute('title', '\u2068Backup[U+2067] nightly\u2069');
    expect(item).toHaveAttribute('aria-label', '\u2068Backup[U+2067] nightly\u2069');
    expect(shownBidiMarks()).toEqual(['[U+2067]', '[U+202E]', '[U+202E]']);
  });

  it('the transfer details show the route and the failed files with the controls as marks', async () => {
    mockApi({ 'GET /api/tasks/a': () => spoofed() });
    renderWithProviders(<TransferDetailsDialog taskId="a" onClose={() => undefined} />);
    const dialog = await screen.findByRole('dialog', { name: 'Transfer Details' });
    await within(dialog).findByTestId('transfer-result');
    expect(within(dialog).getByTestId('result-source').textContent).toBe('SourceBank[U+202E]txt.exe /In[U+202E]dir');
    expect(within(dialog).getByTestId('result-target').textContent).toBe('TargetArchive /Out[U+202E]dir');
    expect(within(dialog).getByTestId('failed-file').textContent).toBe(
      'invoice[U+202E]gpj.exe/In[U+202E]dirPermission deniedForbidden',
    );
    expect(shownBidiMarks()).toHaveLength(5);
  });
});
