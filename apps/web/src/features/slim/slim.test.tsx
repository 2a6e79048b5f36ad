import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Permission,
  formatBytes,
  formatDateTime,
  type CleanupTask,
  type DeleteCleanupData,
  type DuplicateFilesPage,
  type DuplicateGroupItem,
  type LargeFilesPage,
} from '@skyferry/contract';
import { Fail, cloud, mockApi, renderWithProviders, type RecordedCall } from '../../test/utils.tsx';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { initialSessionState, sessionStore } from '../session/store.ts';
import { modesOf, imodeOf, smartSelect, stageFor, wholeGroups } from './model.ts';
import { SlimExplore, pollDelay } from './SlimExplore.tsx';
import { SlimPage, folderPath } from './SlimPage.tsx';
import { cancelScan, pollOnce, resetSlim, slimStore, startScan } from './store.ts';

const T0 = Date.UTC(2024, 0, 1);
const day = 86_400_000;

function file(id: string, path: string, modified: number | null, size = 1000) {
  return { id, path, name: path.slice(path.lastIndexOf('/') + 1), size, modified, category: 'picture' as const };
}

function group(id: string, files: ReturnType<typeof file>[]): DuplicateGroupItem {
  return { group_id: id, hash: `sha256:${id}`, size: files[0]?.size ?? 0, category: 'picture', files };
}

function task(overrides: Partial<CleanupTask> = {}): CleanupTask {
  return {
    task_id: 't1',
    cloud_id: 'c1',
    path: '/',
    total_count: 120,
    runtime: 1500,
    imode: 7,
    large_threshold: 100 * 1024 * 1024,
    free_del_num: -1,
    status: 0,
    filename: '',
    phase: null,
    percentage: null,
    folder_count: 12,
    total_size: 5_000_000,
    bytes_read: 4000,
    duplicate: { count: 5, group_count: 2, size: 3000, image: 5, video: 0, audio: 0, document: 0, other: 0 },
    large: { count: 1, size: 200_000_000, image: 0, video: 1, audio: 0, document: 0, other: 0 },
    empty: { count: 2 },
    has_trash: true,
    limited: false,
    error_count: 0,
    error: null,
    created_at: T0,
    finished_at: T0 + 1500,
    ...overrides,
  };
}

const GROUPS = [
  group('g1', [
    file('a', '/A/beach.jpg', T0 + 2 * day),
    file('b', '/B/beach.jpg', T0),
    file('c', '/C/beach.jpg', T0 + day),
  ]),
  group('g2', [file('d', '/D/cat.jpg', T0), file('e', '/E/cat.jpg', T0 + 5 * day)]),
];

function dupPage(items = GROUPS, extra: Partial<DuplicateFilesPage> = {}): DuplicateFilesPage {
  return {
    items,
    total: items.length,
    page: 1,
    page_size: 20,
    limited: false,
    visible_total: items.length,
    surplus_count: items.reduce((n, g) => n + g.files.length - 1, 0),
    surplus_size: items.reduce((n, g) => n + (g.files.length - 1) * g.size, 0),
    ...extra,
  };
}

beforeEach(() => {
  resetSlim();
  messagesStore.setState({ dialogs: [], loading: 0 });
  sessionStore.setState(initialSessionState());
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('the smart filter', () => {
  it('selects every copy but the newest in each group (UI-SLIM-06)', () => {
    expect(smartSelect(GROUPS, 'newest').sort()).toEqual(['b', 'c', 'd']);
  });

  it('selects every copy but the oldest in each group (UI-SLIM-07)', () => {
    expect(smartSelect(GROUPS, 'oldest').sort()).toEqual(['a', 'c', 'e']);
  });

  it('keeps the first by path when times are equal or unknown, and never selects a whole group', () => {
    const g = group('g', [file('x', '/x', null), file('y', '/y', null), file('z', '/z', T0)]);
    expect(smartSelect([g], 'newest')).toEqual(['x', 'y']);
    expect(smartSelect([g], 'oldest')).toEqual(['y', 'z']);
    for (const keep of ['newest', 'oldest'] as const) {
      expect(wholeGroups([...GROUPS, g], new Set(smartSelect([...GROUPS, g], keep)))).toEqual([]);
    }
    expect(wholeGroups(GROUPS, new Set(['d', 'e', 'a'])).map((x) => x.group_id)).toEqual(['g2']);
  });

  it('maps scan modes to the imode bit set and back', () => {
    expect(imodeOf(['empty_folders'])).toBe(1);
    expect(imodeOf(['duplicate_files', 'large_files'])).toBe(6);
    expect(modesOf(7)).toEqual(['duplicate_files', 'large_files', 'empty_folders']);
    expect(modesOf(5)).toEqual(['large_files', 'empty_folders']);
  });

  it('reads the folder field as an absolute path', () => {
    expect(folderPath('')).toBe('/');
    expect(folderPath(' Photos/2024/ ')).toBe('/Photos/2024');
    expect(folderPath('//a//b')).toBe('/a/b');
  });

  it('polls every 2 to 3 seconds', () => {
    expect(pollDelay(() => 0)).toBe(2000);
    expect(pollDelay(() => 0.999)).toBeLessThanOrEqual(3000);
  });
});

describe('the clean-up state', () => {
  it('starting a task sets status -1 at once, then the polled status (ST-CLN-03, ST-CLN-05)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    mockApi({
      'POST /api/cleanup/run': async () => {
        await gate;
        return { task_id: 't1' };
      },
      'GET /api/cleanup/poll-progress/t1': () => task({ status: 1, phase: 'listing' }),
    });
    const started = startScan({ cloud_id: 'c1', path: '/', imode: 7, large_threshold: 1 });
    expect(slimStore.getState()).toMatchObject({ status: -1, stage: 'scanning' });
    release();
    await started;
    expect(slimStore.getState()).toMatchObject({ status: 1, stage: 'scanning' });
    mockApi({ 'GET /api/cleanup/poll-progress/t1': () => task({ status: 0 }) });
    await pollOnce();
    expect(slimStore.getState()).toMatchObject({ status: 0, stage: 'results' });
  });

  it('cancelling sets status 4 at once and calls DELETE /api/cleanup/task/{id} (ST-CLN-04)', async () => {
    slimStore.setState({ task: task({ status: 1 }), status: 1, stage: 'scanning' });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const api = mockApi({
      'DELETE /api/cleanup/task/t1': async () => {
        await gate;
        return task({ status: 4 });
      },
    });
    const done = cancelScan();
    expect(slimStore.getState().status).toBe(4);
    release();
    await done;
    expect(api.find('DELETE /api/cleanup/task/t1')).toHaveLength(1);
    expect(slimStore.getState()).toMatchObject({ status: 4, stage: 'idle' });
  });

  it('an error answer rejects, and a 404 poll ends the scan (CALL-CLN-11)', async () => {
    mockApi({
      'POST /api/cleanup/run': () => new Fail(403003, 'This cloud drive does not allow this operation.', 403),
    });
    await expect(startScan({ cloud_id: 'c1', path: '/', imode: 7, large_threshold: 1 })).rejects.toThrow(
      'This cloud drive does not allow this operation.',
    );
    expect(slimStore.getState()).toMatchObject({ status: null, stage: 'idle' });
    slimStore.setState({ task: task({ status: 1 }), status: 1, stage: 'scanning' });
    mockApi({});
    await pollOnce();
    expect(slimStore.getState()).toMatchObject({ task: null, status: null, stage: 'idle' });
  });

  it('derives the stage from the status', () => {
    expect(stageFor(-1, 'idle')).toBe('scanning');
    expect(stageFor(1, 'results')).toBe('scanning');
    expect(stageFor(0, 'scanning')).toBe('results');
    expect(stageFor(0, 'done')).toBe('done');
    expect(stageFor(4, 'scanning')).toBe('idle');
    expect(stageFor(3, 'scanning')).toBe('idle');
  });
});

function renderExplore(path = '/slim/explore?task_id=t1') {
  return renderWithProviders(
    <>
      <SlimExplore />
      <MessageHost />
    </>,
    { path },
  );
}

async function answer(label: 'Yes' | 'No') {
  const dialog = await screen.findByRole('dialog');
  await userEvent.click(within(dialog).getByRole('button', { name: label }));
  // The next dialog opens only once this one has gone.
  await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
}

describe('/slim/explore', () => {
  it('walks through scanning, results, deleting and done (ST-CLN-01), with the smart filter', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let status = 1;
    let remaining = GROUPS;
    let release: () => void = () => undefined;
    const deleting = new Promise<void>((r) => (release = r));
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () =>
        task(status === 1 ? { status: 1, phase: 'hashing', percentage: 40, filename: '/A/beach.jpg' } : {}),
      'GET /api/cleanup/duplicate-files': () => dupPage(remaining),
      'DELETE /api/cleanup/duplicate-files': async (call: RecordedCall): Promise<DeleteCleanupData> => {
        await deleting;
        const ids = (call.body as { ids: string[] }).ids;
        remaining = GROUPS.map((g) => ({ ...g, files: g.files.filter((f) => !ids.includes(f.id)) })).filter(
          (g) => g.files.length > 1,
        );
        // In the trash, nothing left the cloud yet: nothing is freed.
        return {
          deleted: ids.length,
          freed: 0,
          trashed: true,
          in_trash: ids.length * 1000,
          failed: [],
          remaining: 0,
          task: task(),
        };
      },
    });
    renderExplore();
    expect(await screen.findByText('Comparing files of the same size…')).toBeInTheDocument();
    expect(screen.getByTestId('slim-explore')).toHaveAttribute('data-stage', 'scanning');
    status = 0;
    await act(() => vi.advanceTimersByTimeAsync(3000));
    // The next poll came within 3 s; the rest of the journey needs no fake clock.
    vi.useRealTimers();
    await waitFor(() => expect(screen.getByTestId('slim-explore')).toHaveAttribute('data-stage', 'results'));
    expect(await screen.findAllByTestId('slim-group')).toHaveLength(2);

    await userEvent.click(screen.getByRole('button', { name: 'Smart filter' }));
    await userEvent.click(await screen.findByText('Keep the newest, select the other copies'));
    const checked = screen
      .getAllByRole('checkbox')
      .filter((c) => (c as HTMLInputElement).checked)
      .map((c) => c.getAttribute('aria-label'));
    expect(checked.sort()).toEqual(['/B/beach.jpg', '/C/beach.jpg', '/D/cat.jpg']);
    expect(screen.getByTestId('slim-selected')).toHaveTextContent('3 selected');

    await userEvent.click(screen.getByRole('button', { name: 'Delete selected' }));
    // Before anything goes, the spec's restore window is said.
    expect(
      await screen.findByText(
        "Move 3 selected items to the cloud drive's trash? Deleted items can be restored from the cloud drive's deleted files within 30 days.",
      ),
    ).toBeInTheDocument();
    await answer('Yes');
    await waitFor(() => expect(screen.getByTestId('slim-explore')).toHaveAttribute('data-stage', 'deleting'));
    release();
    await waitFor(() => expect(screen.getByTestId('slim-explore')).toHaveAttribute('data-stage', 'done'));
    expect(screen.getByTestId('slim-done-summary')).toHaveTextContent('3 items moved to the cloud drive’s trash.');
    expect(screen.getByTestId('slim-in-trash')).toHaveTextContent(
      '2.93 KB stays in the cloud drive until its trash is emptied.',
    );
    expect(screen.getByTestId('slim-done')).not.toHaveTextContent('freed');
    expect(screen.getByTestId('slim-done')).toHaveTextContent('within 30 days');
    const sent = api.find('DELETE /api/cleanup/duplicate-files')[0]?.body as Record<string, unknown>;
    expect(sent).toEqual({ task_id: 't1', ids: expect.arrayContaining(['b', 'c', 'd']) });
    expect(sent.delete_all_copies).toBeUndefined();

    // Back in the results, the list is read again: every group is down to one copy, so none is left.
    await userEvent.click(screen.getByRole('button', { name: 'Back to results' }));
    expect(await screen.findByTestId('slim-nothing')).toBeInTheDocument();
    expect(api.find('GET /api/cleanup/duplicate-files')).toHaveLength(2);
  });

  it('asks before deleting every copy of a file, and says so', async () => {
    slimStore.setState({ task: task(), status: 0, stage: 'results' });
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task(),
      'GET /api/cleanup/duplicate-files': () => dupPage(),
      'DELETE /api/cleanup/duplicate-files': () => ({
        deleted: 2,
        freed: 2000,
        trashed: true,
        in_trash: 0,
        failed: [],
        remaining: 0,
        task: task(),
      }),
    });
    renderExplore();
    await screen.findAllByTestId('slim-group');
    await userEvent.click(screen.getByRole('checkbox', { name: '/D/cat.jpg' }));
    await userEvent.click(screen.getByRole('checkbox', { name: '/E/cat.jpg' }));
    await userEvent.click(screen.getByRole('button', { name: 'Delete selected' }));
    expect(
      await screen.findByText(/You selected every copy of 1 file, so it will be gone altogether\./),
    ).toBeInTheDocument();
    await answer('No');
    expect(api.find('DELETE /api/cleanup/duplicate-files')).toHaveLength(0);
    await userEvent.click(screen.getByRole('button', { name: 'Delete selected' }));
    await answer('Yes');
    await screen.findByTestId('slim-done');
    expect(api.find('DELETE /api/cleanup/duplicate-files')[0]?.body).toEqual({
      task_id: 't1',
      ids: ['d', 'e'],
      delete_all_copies: true,
    });
  });

  it('the smart filter over a result of several pages selects every page’s surplus copies, says how many first, and deletes them all', async () => {
    slimStore.setState({ task: task(), status: 0, stage: 'results' });
    // 8 groups of three copies, 5 to a page: the smart filter must reach the 3 on page 2 too.
    const all = Array.from({ length: 8 }, (_, i) =>
      group(`g${i}`, [
        file(`${i}a`, `/A/${i}.jpg`, T0 + 2 * day),
        file(`${i}b`, `/B/${i}.jpg`, T0),
        file(`${i}c`, `/C/${i}.jpg`, T0 + day),
      ]),
    );
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task(),
      'GET /api/cleanup/duplicate-files': (c) => {
        const page = Number(c.query.get('page') ?? 1);
        return {
          ...dupPage(all.slice((page - 1) * 5, page * 5), { page, page_size: 5 }),
          total: 8,
          visible_total: 8,
          surplus_count: 16,
          surplus_size: 16_000,
        };
      },
      'DELETE /api/cleanup/duplicate-files': () => ({
        deleted: 16,
        freed: 16_000,
        trashed: true,
        in_trash: 0,
        failed: [],
        remaining: 0,
        task: task(),
      }),
    });
    renderExplore();
    expect(await screen.findAllByTestId('slim-group')).toHaveLength(5);
    await userEvent.click(screen.getByRole('button', { name: 'Smart filter' }));
    await userEvent.click(await screen.findByText('Keep the oldest, select the other copies'));
    // The total of the whole result, before anything is deleted.
    const line = screen.getByTestId('slim-selected');
    expect(line).toHaveAttribute('data-scope', 'all-pages');
    expect(line).toHaveTextContent(
      `16 copies selected on all pages (${formatBytes(16_000)}) The oldest copy of each group is kept.`,
    );
    // This page shows the picks: the two newer copies of each group.
    expect(screen.getByRole('checkbox', { name: '/A/0.jpg' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: '/B/0.jpg' })).not.toBeChecked();
    await userEvent.click(screen.getByRole('button', { name: 'Delete selected' }));
    expect(
      await screen.findByText(
        "Move 16 selected items to the cloud drive's trash? The oldest copy of each group is kept. Deleted items can be restored from the cloud drive's deleted files within 30 days.",
      ),
    ).toBeInTheDocument();
    await answer('Yes');
    await screen.findByTestId('slim-done');
    expect(api.find('DELETE /api/cleanup/duplicate-files').map((c) => c.body)).toEqual([
      { task_id: 't1', all: true, keep: 'oldest' },
    ]);
  });

  it('a hand-made change to the smart filter’s picks leaves the whole-result selection for this page', async () => {
    slimStore.setState({ task: task(), status: 0, stage: 'results' });
    mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task(),
      'GET /api/cleanup/duplicate-files': () => dupPage(GROUPS, { total: 25, visible_total: 25, page_size: 2 }),
    });
    renderExplore();
    await screen.findAllByTestId('slim-group');
    await userEvent.click(screen.getByRole('button', { name: 'Smart filter' }));
    await userEvent.click(await screen.findByText('Keep the newest, select the other copies'));
    expect(screen.getByTestId('slim-selected')).toHaveAttribute('data-scope', 'all-pages');
    await userEvent.click(screen.getByRole('checkbox', { name: '/B/beach.jpg' }));
    expect(screen.getByTestId('slim-selected')).toHaveAttribute('data-scope', 'page');
    expect(screen.getByTestId('slim-selected')).toHaveTextContent('2 selected');
  });

  it('"Delete all" of duplicates says it keeps the newest copy, and an unknown id comes back as left alone', async () => {
    slimStore.setState({ task: task(), status: 0, stage: 'results' });
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task(),
      'GET /api/cleanup/duplicate-files': () => dupPage(),
      'DELETE /api/cleanup/duplicate-files': () => ({
        deleted: 3,
        freed: 3000,
        trashed: true,
        in_trash: 0,
        failed: [{ id: 'x', path: '', reason: 'not_found', message: 'not a result of this list' }],
        remaining: 0,
        task: task(),
      }),
    });
    renderExplore();
    await screen.findAllByTestId('slim-group');
    await userEvent.click(screen.getByRole('button', { name: 'Delete all, keep the newest' }));
    expect(
      await screen.findByText(
        "Delete the copies in all 2 groups? The newest copy of each file is kept. Deleted items can be restored from the cloud drive's deleted files within 30 days.",
      ),
    ).toBeInTheDocument();
    await answer('Yes');
    expect(await screen.findByTestId('slim-done')).toHaveTextContent('no longer among the results');
    expect(api.find('DELETE /api/cleanup/duplicate-files')[0]?.body).toEqual({
      task_id: 't1',
      all: true,
      keep: 'newest',
    });
  });

  it('filters by category tab and reverses the order (UI-SLIM-04, UI-SLIM-05)', async () => {
    slimStore.setState({ task: task(), status: 0, stage: 'results' });
    const large = (call: RecordedCall): LargeFilesPage => {
      const items = [file('v1', '/v/a.mp4', T0, 300), file('v2', '/v/b.mp4', T0, 200)].map((f) => ({
        ...f,
        category: 'video' as const,
      }));
      const ordered = call.query.get('order') === 'asc' ? [...items].reverse() : items;
      const shown = call.query.get('category') === 'audio' ? [] : ordered;
      return { items: shown, total: shown.length, page: 1, page_size: 20, limited: false, visible_total: shown.length };
    };
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task(),
      'GET /api/cleanup/duplicate-files': () => dupPage(),
      'GET /api/cleanup/large-files': large,
    });
    renderExplore();
    await userEvent.click(await screen.findByRole('tab', { name: /Large files/ }));
    const rows = async () => (await screen.findAllByTestId('slim-row')).map((r) => r.getAttribute('data-path'));
    expect(await rows()).toEqual(['/v/a.mp4', '/v/b.mp4']);
    // Each row shows its name, folder, category, size and modified date (ENT-CLN-05).
    const first = screen.getAllByTestId('slim-row')[0] as HTMLElement;
    expect(within(first).getByTestId('slim-row-category')).toHaveTextContent('Videos');
    expect(first.textContent).toContain('a.mp4');
    expect(first.textContent).toContain('/v');
    expect(first.textContent).toContain(formatBytes(300));
    expect(first.textContent).toContain(formatDateTime(T0));
    await userEvent.click(screen.getByTestId('slim-order'));
    await waitFor(async () => expect(await rows()).toEqual(['/v/b.mp4', '/v/a.mp4']));
    expect(api.find('GET /api/cleanup/large-files').at(-1)?.query.get('order')).toBe('asc');
    const list = screen.getByTestId('slim-list-large_files');
    expect(
      within(list)
        .getAllByRole('tab')
        .map((t) => t.textContent),
    ).toEqual(['All', 'Videos', 'Audio', 'Documents', 'Others', 'Pictures']);
    await userEvent.click(screen.getByRole('tab', { name: 'Audio' }));
    expect(await screen.findByTestId('slim-nothing')).toHaveTextContent('Nothing found here.');
    expect(api.find('GET /api/cleanup/large-files').at(-1)?.query.get('category')).toBe('audio');
  });

  it('rescans only after confirmation, clearing the results (ST-CLN-02)', async () => {
    slimStore.setState({
      task: task(),
      status: 0,
      stage: 'results',
      lastRun: { cloud_id: 'c1', path: '/', imode: 2, large_threshold: 5 },
    });
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task(),
      'GET /api/cleanup/duplicate-files': () => dupPage(),
      'POST /api/cleanup/run': () => ({ task_id: 't2' }),
      'GET /api/cleanup/poll-progress/t2': () => task({ task_id: 't2', status: 1, phase: 'listing' }),
    });
    const { router } = renderExplore();
    await screen.findAllByTestId('slim-group');
    await userEvent.click(screen.getByRole('button', { name: 'Rescan' }));
    expect(await screen.findByText('Rescanning clears the current results. Continue?')).toBeInTheDocument();
    await answer('No');
    expect(api.find('POST /api/cleanup/run')).toHaveLength(0);
    expect(screen.getAllByTestId('slim-group')).toHaveLength(2);
    await userEvent.click(screen.getByRole('button', { name: 'Rescan' }));
    await answer('Yes');
    await screen.findByTestId('slim-scanning');
    expect(screen.queryByTestId('slim-group')).not.toBeInTheDocument();
    expect(api.find('POST /api/cleanup/run')[0]?.body).toEqual({
      cloud_id: 'c1',
      path: '/',
      imode: 2,
      large_threshold: 5,
    });
    expect(router.state.location.search).toBe('?task_id=t2');
  });

  it('a free user sees the upgrade notice; Delete all opens the Upgrade modal instead of deleting', async () => {
    slimStore.setState({ task: task({ limited: true, free_del_num: 20 }), status: 0, stage: 'results' });
    const api = mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task({ limited: true }),
      'GET /api/cleanup/duplicate-files': () => dupPage(GROUPS, { total: 40, visible_total: 20, limited: true }),
    });
    renderExplore();
    expect(await screen.findByTestId('slim-limited')).toHaveTextContent('You see the first 20 of 40 results.');
    await userEvent.click(screen.getByRole('button', { name: 'Delete all, keep the newest' }));
    const dialog = await screen.findByRole('dialog', { name: 'Upgrade to Premium' });
    expect(within(dialog).getByRole('button', { name: 'Upgrade' })).toBeInTheDocument();
    expect(api.find('DELETE /api/cleanup/duplicate-files')).toEqual([]);
  });

  it('shows a cancelled scan and a failed one with its reason', async () => {
    mockApi({
      'GET /api/cleanup/poll-progress/t1': () => task({ status: 3, error: { code: 'not_found', message: '' } }),
    });
    renderExplore();
    expect(await screen.findByTestId('slim-failed')).toHaveTextContent('The scan failed: The path does not exist.');
  });
});

describe('/slim', () => {
  it('offers the clouds that can be cleaned up, the three modes, and starts a scan', async () => {
    sessionStore.setState({
      user: { ...initialSessionState().user, access_token: 'a' },
      clouds: [
        cloud('c1', { cloud_alias_name: 'Photos drive' }),
        cloud('c2', { cloud_alias_name: 'Read only', flags: Permission.read }),
      ],
    });
    const api = mockApi({
      'GET /api/cleanup/task': () => null,
      'POST /api/cleanup/run': () => ({ task_id: 't9' }),
      'GET /api/cleanup/poll-progress/t9': () => task({ task_id: 't9', status: 1 }),
    });
    const { router } = renderWithProviders(
      <>
        <SlimPage />
        <MessageHost />
      </>,
      { path: '/slim' },
    );
    expect(await screen.findByRole('radio', { name: /Photos drive/ })).toBeChecked();
    expect(screen.getByRole('radio', { name: /Read only/ })).toBeDisabled();
    expect(screen.getByText('This cloud drive cannot be cleaned up.')).toBeInTheDocument();
    for (const name of ['Duplicate files', 'Large files', 'Empty folders']) {
      expect(screen.getByRole('checkbox', { name })).toBeChecked();
    }
    await userEvent.click(screen.getByRole('checkbox', { name: 'Large files' }));
    await userEvent.click(screen.getByRole('button', { name: 'Start scan' }));
    await waitFor(() => expect(router.state.location.search).toBe('?task_id=t9'));
    expect(api.find('POST /api/cleanup/run')[0]?.body).toEqual({
      cloud_id: 'c1',
      path: '/',
      imode: 3,
      large_threshold: 100 * 1024 * 1024,
    });
    expect(api.find('GET /api/cleanup/task')[0]?.query.get('cloud_id')).toBe('c1');
  });

  it('resets the clean-up state when entered (ST-CLN-06)', async () => {
    slimStore.setState({ task: task(), status: 0, stage: 'done' });
    mockApi({ 'GET /api/cleanup/task': () => null });
    renderWithProviders(<SlimPage />, { path: '/slim' });
    await screen.findByTestId('slim-page');
    expect(slimStore.getState()).toMatchObject({ task: null, status: null, stage: 'idle' });
  });
});
