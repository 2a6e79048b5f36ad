import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DesktopTransfer, ServerTask } from '@skyferry/contract';
import { authData, mockApi } from '../../test/utils.tsx';
import { applyAuth } from '../session/actions.ts';
import { resetSessionStore } from '../session/store.ts';
import { startDesktopReporter } from './desktop-reporter.ts';
import { makeTask } from './fixtures.ts';

function server() {
  const state = { running: [] as ServerTask[], details: new Map<string, ServerTask>() };
  const api = mockApi({
    'POST /api/tasks/list': () => ({ items: state.running, total: state.running.length }),
    ...Object.fromEntries(
      ['a', 'b'].map((id) => [`GET /api/tasks/${id}`, () => ({ ...state.details.get(id)!, result_list: [] })]),
    ),
  });
  return { state, api };
}

function bridge() {
  const trays: DesktopTransfer[][] = [];
  const notices: Array<{ title: string; body: string }> = [];
  return {
    trays,
    notices,
    b: {
      setRunningTransfers: (t: DesktopTransfer[]) => trays.push(t),
      notifyTaskEnded: (n: { title: string; body: string }) => notices.push(n),
    },
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  localStorage.clear();
  resetSessionStore();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('desktop tray and notifications', () => {
  it('lists running transfers in the tray and notifies when one ends, with its outcome', async () => {
    const { state } = server();
    applyAuth(authData());
    state.running = [
      makeTask({
        id: 'a',
        task_name: 'Photos → Backup',
        state: 2,
        progress: { percentage: 42, speed: 1, transferred: 1, length: 2, eta: 1 },
      }),
      makeTask({ id: 'b', task_name: 'Docs → NAS', state: 8 }),
    ];
    const { b, trays, notices } = bridge();
    const stop = startDesktopReporter(b, 1000);
    await vi.advanceTimersByTimeAsync(10);
    expect(trays.at(-1)).toEqual([{ id: 'a', name: 'Photos → Backup', percent: 42 }]);

    state.details.set('a', makeTask({ id: 'a', task_name: 'Photos → Backup', state: 5 }));
    state.running = [makeTask({ id: 'b', task_name: 'Docs → NAS', state: 1 })];
    await vi.advanceTimersByTimeAsync(1000);
    expect(trays.at(-1)).toEqual([{ id: 'b', name: 'Docs → NAS', percent: null }]);
    expect(notices).toEqual([{ title: 'Photos → Backup', body: 'Partially Success' }]);

    // A task that went back to its schedule (state 7) is not "ended".
    state.details.set('b', makeTask({ id: 'b', task_name: 'Docs → NAS', state: 7 }));
    state.running = [];
    await vi.advanceTimersByTimeAsync(1000);
    expect(trays.at(-1)).toEqual([]);
    expect(notices).toHaveLength(1);
    stop();
  });

  it('reports nothing running for a visitor, without asking the server', async () => {
    const { api } = server();
    const { b, trays } = bridge();
    const stop = startDesktopReporter(b, 1000);
    await vi.advanceTimersByTimeAsync(10);
    expect(trays).toEqual([[]]);
    expect(api.find('POST /api/tasks/list')).toHaveLength(0);
    stop();
  });
});
