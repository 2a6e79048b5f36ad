import { screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PollProgressData, ServerTask } from '@skyferry/contract';
import { Fail, authData, mockApi, renderWithProviders, type RecordedCall } from '../../test/utils.tsx';
import { applyAuth } from '../session/actions.ts';
import { resetSessionStore } from '../session/store.ts';
import { failedResult, makeTask } from './fixtures.ts';
import { TransmissionListDialog } from './TransmissionListDialog.tsx';
import { TransmissionPolling, progressPollDelay, resetTransmission, transmission, transmissionStore } from './store.ts';

const progress = (percentage: number) => ({
  percentage,
  speed: 1000,
  transferred: percentage * 10,
  length: 1000,
  eta: 5,
});

/**
 * A server that answers the two lists from arrays the test changes, and each task's poll from a map.
 * A running-list read may be slow: `runningGate` holds it and it answers what the list holds once
 * let through; `runningDelays` makes the next reads answer what the list held when asked, that
 * many ms later.
 */
function fakeServer() {
  const state = {
    running: [] as ServerTask[],
    completed: [] as ServerTask[],
    polls: new Map<string, PollProgressData | Fail>(),
    runningGate: undefined as Promise<void> | undefined,
    runningDelays: [] as number[],
  };
  const api = mockApi({
    'POST /api/tasks/list': async (c) => {
      const body = c.body as { completed: 0 | 1; page: number; page_size: number };
      if (body.completed === 0 && state.runningGate) await state.runningGate;
      const items = body.completed === 0 ? state.running : state.completed;
      const delay = body.completed === 0 ? state.runningDelays.shift() : undefined;
      if (delay) await new Promise((r) => setTimeout(r, delay));
      return { items, total: items.length };
    },
    ...Object.fromEntries(
      ['a', 'b', 'c'].map((id) => [
        `GET /api/cloud-manager/poll-progress/${id}`,
        () => state.polls.get(id) ?? new Fail(404, 'Not found.', 404),
      ]),
    ),
  });
  const lists = (completed: 0 | 1) =>
    api
      .find('POST /api/tasks/list')
      .filter((c: RecordedCall) => (c.body as { completed: number }).completed === completed);
  const polls = (id: string) => api.find(`GET /api/cloud-manager/poll-progress/${id}`);
  return { state, api, lists, polls };
}

beforeEach(() => {
  vi.useFakeTimers();
  resetTransmission();
});
afterEach(() => {
  localStorage.clear();
  resetSessionStore();
  transmission.stop();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('progress poll delay', () => {
  it('is 2 to 3 s (spec section 7)', () => {
    expect(progressPollDelay(() => 0)).toBe(2000);
    expect(progressPollDelay(() => 0.5)).toBe(2500);
    expect(progressPollDelay(() => 0.9999)).toBe(3000);
    for (let i = 0; i < 50; i++) {
      const d = progressPollDelay();
      expect(d).toBeGreaterThanOrEqual(2000);
      expect(d).toBeLessThanOrEqual(3000);
    }
  });
});

describe('transmission polling', () => {
  it('reads both lists in pages of 100 at once, then the running list every 5 s, and each running task every 2-3 s', async () => {
    const s = fakeServer();
    s.state.running = [makeTask({ id: 'a', state: 2 }), makeTask({ id: 'b', state: 7 })];
    s.state.polls.set('a', { status: 2, progress: progress(10), total_counts: 10, finished_counts: 1 });
    const p = new TransmissionPolling(() => 0.5);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.lists(0)).toHaveLength(1);
    expect(s.lists(1)).toHaveLength(1);
    expect(s.lists(0)[0]?.body).toEqual({ page: 1, page_size: 100, completed: 0 });
    // Only the task in state 2 is polled (7 is not running).
    expect(p.polled()).toEqual(['a']);

    await vi.advanceTimersByTimeAsync(2499);
    expect(s.polls('a')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.polls('a')).toHaveLength(1);
    expect(transmissionStore.getState().running.list[0]?.progress.percentage).toBe(10);

    s.state.polls.set('a', { status: 2, progress: progress(40), total_counts: 10, finished_counts: 4 });
    await vi.advanceTimersByTimeAsync(2500);
    expect(s.polls('a')).toHaveLength(2);
    expect(transmissionStore.getState().running.list[0]?.finished_counts).toBe(4);
    // 5 s: the running list again (not the completed one).
    expect(s.lists(0)).toHaveLength(2);
    expect(s.lists(1)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(s.lists(0)).toHaveLength(3);
    expect(s.polls('a')).toHaveLength(4);
    p.stop();
  });

  it('stops polling a task that leaves states 1-2 and refreshes both lists; nothing more once stopped', async () => {
    const s = fakeServer();
    s.state.running = [makeTask({ id: 'a', state: 1 }), makeTask({ id: 'c', state: 2 })];
    s.state.polls.set('a', { status: 1, progress: progress(0), total_counts: 30, finished_counts: 0 });
    s.state.polls.set('c', { status: 2, progress: progress(50), total_counts: 10, finished_counts: 5 });
    const p = new TransmissionPolling(() => 0);
    p.start();
    await vi.advanceTimersByTimeAsync(2000);
    expect(s.polls('a')).toHaveLength(1);
    expect(s.polls('c')).toHaveLength(1);

    // Task a ends: its poll answers state 0 and the server lists it as complete.
    s.state.polls.set('a', { status: 0, progress: progress(100), total_counts: 30, finished_counts: 30 });
    s.state.running = [makeTask({ id: 'c', state: 2 })];
    s.state.completed = [makeTask({ id: 'a', state: 0 })];
    await vi.advanceTimersByTimeAsync(2000);
    expect(s.polls('a')).toHaveLength(2);
    expect(s.lists(1)).toHaveLength(2);
    expect(s.lists(0)).toHaveLength(2);
    expect(transmissionStore.getState().completed.list.map((t) => t.id)).toEqual(['a']);
    expect(transmissionStore.getState().completed.total).toBe(1);
    expect(p.polled()).toEqual(['c']);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.polls('a')).toHaveLength(2);
    expect(s.polls('c').length).toBeGreaterThanOrEqual(6);

    p.stop();
    const before = s.api.calls.length;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(s.api.calls.length).toBe(before);
  });

  it('a poll answering 404 stops polling that task', async () => {
    const s = fakeServer();
    s.state.running = [makeTask({ id: 'b', state: 2 })];
    const p = new TransmissionPolling(() => 0.9999);
    p.start();
    await vi.advanceTimersByTimeAsync(3000);
    expect(s.polls('b')).toHaveLength(1);
    s.state.running = [];
    await vi.advanceTimersByTimeAsync(9000);
    expect(s.polls('b')).toHaveLength(1);
    expect(p.polled()).toEqual([]);
    p.stop();
  });

  it('a task found running by the 5 s refresh starts being polled; one gone from the list refreshes the completed list', async () => {
    const s = fakeServer();
    s.state.running = [makeTask({ id: 'a', state: 8 })];
    const p = new TransmissionPolling(() => 0);
    p.start();
    await vi.advanceTimersByTimeAsync(4000);
    expect(s.polls('a')).toHaveLength(0);
    s.state.running = [makeTask({ id: 'a', state: 1 })];
    s.state.polls.set('a', { status: 2, progress: progress(5), total_counts: 3, finished_counts: 0 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(p.polled()).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(2000);
    expect(s.polls('a')).toHaveLength(1);
    // The list no longer has it (it finished between polls): the completed list is read again.
    s.state.running = [];
    const completedBefore = s.lists(1).length;
    await vi.advanceTimersByTimeAsync(3000);
    expect(p.polled()).toEqual([]);
    expect(s.lists(1).length).toBe(completedBefore + 1);
    p.stop();
  });

  it('a canceled task stopping in state 9 reaches the completed list once it leaves the running list', async () => {
    const s = fakeServer();
    s.state.running = [makeTask({ id: 'a', state: 2 })];
    s.state.polls.set('a', { status: 9, progress: progress(20), total_counts: 10, finished_counts: 2 });
    const p = new TransmissionPolling(() => 0);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    // The poll answers 9 (stopping): polling stops, both lists are read; the task still stops.
    s.state.running = [makeTask({ id: 'a', state: 9 })];
    await vi.advanceTimersByTimeAsync(2000);
    expect(p.polled()).toEqual([]);
    expect(transmissionStore.getState().running.list[0]?.state).toBe(9);
    const completedReads = s.lists(1).length;
    // Stopped: the server lists it as canceled; the next running-list read notices and reads the completed list.
    s.state.running = [];
    s.state.completed = [makeTask({ id: 'a', state: 4 })];
    await vi.advanceTimersByTimeAsync(3000);
    expect(s.lists(1).length).toBe(completedReads + 1);
    expect(transmissionStore.getState().completed.list.map((t) => [t.id, t.state])).toEqual([['a', 4]]);
    expect(transmissionStore.getState().running.total).toBe(0);
    p.stop();
  });

  it('a retried task that finishes while both lists are read again shows in the completed list', async () => {
    const s = fakeServer();
    s.state.completed = [makeTask({ id: 'a', state: 5 })];
    const p = new TransmissionPolling(() => 0);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    // Retried: the server lists it as waiting, and it is done before the running list is answered.
    s.state.completed = [];
    s.state.running = [makeTask({ id: 'a', state: 8 })];
    let release!: () => void;
    s.state.runningGate = new Promise<void>((r) => (release = r));
    const both = p.refreshAll();
    await vi.advanceTimersByTimeAsync(0);
    s.state.running = [];
    s.state.completed = [makeTask({ id: 'a', state: 0 })];
    s.state.runningGate = undefined;
    release();
    await both;
    await vi.advanceTimersByTimeAsync(12_000);
    expect(transmissionStore.getState().completed.list.map((t) => [t.id, t.state])).toEqual([['a', 0]]);
    p.stop();
  });

  it('a task seen running only by a read a newer one overtook still reaches the completed list', async () => {
    const s = fakeServer();
    const p = new TransmissionPolling(() => 0);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    // Started by its schedule; the 5 s read sees it but answers slowly, after the 10 s read.
    s.state.running = [makeTask({ id: 'a', state: 8 })];
    s.state.runningDelays = [7000];
    await vi.advanceTimersByTimeAsync(6000);
    s.state.running = [];
    s.state.completed = [makeTask({ id: 'a', state: 0 })];
    await vi.advanceTimersByTimeAsync(14_000);
    expect(transmissionStore.getState().completed.list.map((t) => [t.id, t.state])).toEqual([['a', 0]]);
    p.stop();
  });

  it('says "Migration Failed" or "Sync Failed" when a watched task ends in state 3, once (MSG-19, MSG-20)', async () => {
    applyAuth(authData());
    const s = fakeServer();
    const error = { code: 'permission', message: 'Permission denied' };
    s.state.running = [
      makeTask({ id: 'a', state: 2, task_name: 'Holiday → Archive' }),
      makeTask({ id: 'b', state: 2, task_type: 1, sync_mode: 'one_way', task_name: 'Docs ⇄ NAS' }),
    ];
    s.state.polls.set('a', { status: 2, progress: progress(10), total_counts: 3, finished_counts: 0 });
    s.state.polls.set('b', { status: 2, progress: progress(10), total_counts: 3, finished_counts: 0 });
    // An older failure already in the list says nothing.
    s.state.completed = [makeTask({ id: 'c', state: 3, result: failedResult(error, { failed: 1 }) })];
    renderWithProviders(<TransmissionListDialog opened onClose={() => undefined} />);
    await vi.advanceTimersByTimeAsync(3000);
    expect(screen.queryByText(/Failed: Permission denied ·/)).toBeNull();

    s.state.polls.set('a', { status: 3, progress: progress(10), total_counts: 3, finished_counts: 0 });
    s.state.polls.set('b', { status: 3, progress: progress(10), total_counts: 3, finished_counts: 0 });
    s.state.running = [];
    s.state.completed = [
      makeTask({ id: 'a', state: 3, task_name: 'Holiday → Archive', result: failedResult(error, { failed: 3 }) }),
      makeTask({
        id: 'b',
        state: 3,
        task_type: 1,
        sync_mode: 'one_way',
        task_name: 'Docs ⇄ NAS',
        result: failedResult(error, { failed: 3 }),
      }),
      makeTask({ id: 'c', state: 3, result: failedResult(error, { failed: 1 }) }),
    ];
    await vi.advanceTimersByTimeAsync(3000);
    expect(screen.getByText('Migration Failed: Permission denied · Holiday → Archive')).toBeInTheDocument();
    expect(screen.getByText('Sync Failed: Permission denied · Docs ⇄ NAS')).toBeInTheDocument();
    // The notices close after 3 s; reading the lists again does not repeat them.
    await vi.advanceTimersByTimeAsync(10_000);
    await transmission.refreshAll();
    await vi.advanceTimersByTimeAsync(500);
    expect(screen.queryAllByText(/Failed: Permission denied ·/)).toHaveLength(0);
  });

  it('polls only while the Transmission list dialog is open', async () => {
    applyAuth(authData());
    const s = fakeServer();
    s.state.running = [makeTask({ id: 'a', state: 2, progress: progress(10), task_name: 'Holiday → Archive' })];
    s.state.polls.set('a', { status: 2, progress: progress(30), total_counts: 10, finished_counts: 3 });
    const view = renderWithProviders(<TransmissionListDialog opened onClose={() => undefined} />);
    await vi.advanceTimersByTimeAsync(0);
    expect(s.lists(0)).toHaveLength(1);
    expect(screen.getByTestId('tab-running').textContent).toBe('Transferring (1)');
    expect(screen.getByTestId('task-percent').textContent).toBe('10%');
    await vi.advanceTimersByTimeAsync(3000);
    expect(s.polls('a')).toHaveLength(1);
    expect(screen.getByTestId('task-percent').textContent).toBe('30%');
    await vi.advanceTimersByTimeAsync(2000);
    expect(s.lists(0)).toHaveLength(2);
    view.unmount();
    const before = s.api.calls.length;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(s.api.calls.length).toBe(before);
  });
});
