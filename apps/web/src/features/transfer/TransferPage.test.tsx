import { notifications } from '@mantine/notifications';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, type CreateTaskBody, type FileItem, type PlanItemView, type TaskPlan } from '@skyferry/contract';
import { SPOOFED, authData, cloud, initData, renderWithProviders, shownBidiMarks } from '../../test/utils.tsx';
import { guideStore } from '../guide/store.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { applyAuth } from '../session/actions.ts';
import { setNavigator } from '../session/navigation.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { shellStore } from '../shell/store.ts';
import { makeTask } from '../tasks/fixtures.ts';
import { resetForms } from './store.ts';
import { TransferPage } from './TransferPage.tsx';

const file = (path: string, size = 100): FileItem => ({
  id: path,
  name: path.slice(path.lastIndexOf('/') + 1),
  path,
  type: 1,
  size,
  modified: 0,
  mime_type: null,
});
const folder = (path: string): FileItem => ({ ...file(path, 0), type: 0 });

const TREES: Record<string, Record<string, FileItem[]>> = {
  c1: {
    '/': [folder('/Photos'), folder('/Docs'), file('/notes.txt')],
    '/Photos': [file('/Photos/a.jpg'), file('/Photos/b.jpg'), folder('/Photos/Trip')],
    '/Photos/Trip': [file('/Photos/Trip/c.jpg')],
    '/Docs': [file('/Docs/x.pdf')],
  },
  c2: { '/': [folder('/Backup')], '/Backup': [] },
  p: { '/': [] },
  g: { '/': [folder('/Reports')], '/Reports': [file('/Reports/Plan.docx')] },
};

function item(action: PlanItemView['action'], path: string, size = 100): PlanItemView {
  return {
    action,
    kind: 'file',
    side: 'target',
    source_path: path,
    target_path: `/Backup${path}`,
    reason: 'new',
    size,
  };
}

function plan(items: PlanItemView[], extra: Partial<TaskPlan> = {}): TaskPlan {
  const totals = (a: PlanItemView['action']) => {
    const of = items.filter((i) => i.action === a);
    return { count: of.length, bytes: of.reduce((s, i) => s + i.size, 0) };
  };
  const deletes = totals('delete');
  return {
    summary: {
      copy: totals('copy'),
      update: totals('update'),
      delete: deletes,
      skip: totals('skip'),
      conflict: totals('conflict'),
      mkdir: totals('mkdir'),
    },
    bytes_to_target: totals('copy').bytes + totals('update').bytes,
    bytes_to_source: 0,
    files_to_transfer: totals('copy').count + totals('update').count,
    deletes: { count: deletes.count, files: deletes.count, needs_confirmation: false },
    items,
    total_items: items.length,
    errors: [],
    times_kept: { source: true, target: true },
    ...extra,
  };
}

interface Answer {
  data?: unknown;
  fail?: { code: number; msg: string; data?: unknown; status?: number };
}
type Handler = (body: unknown, query: URLSearchParams) => Answer | Promise<Answer>;

const isCount = (b: CreateTaskBody) => b.dry_run === true && b.plan_query?.limit === 1 && !b.plan_query.actions;

/** A fetch stub answering envelopes, failures with data too (the 409004 prompt carries it). */
function serve(handlers: Record<string, Handler>) {
  const calls: Array<{ key: string; body: unknown }> = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input));
      const key = `${init?.method ?? 'GET'} ${url.pathname}`;
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      calls.push({ key, body });
      const handler = handlers[key];
      const answer = handler
        ? await handler(body, url.searchParams)
        : { fail: { code: 404, msg: 'not found', status: 404 } };
      const envelope = answer.fail
        ? { code: answer.fail.code, msg: answer.fail.msg, data: answer.fail.data ?? null }
        : { code: 0, msg: 'success', data: answer.data ?? null };
      return new Response(JSON.stringify(envelope), {
        status: answer.fail?.status ?? 200,
        headers: { 'content-type': 'application/json' },
      });
    }),
  );
  return {
    calls,
    bodies: (key: string) => calls.filter((c) => c.key === key).map((c) => c.body),
    // The filter section's live counts are dry runs of one item: tested on their own (counts()).
    tasks: () => taskBodies().filter((b) => !isCount(b)),
    counts: () => taskBodies().filter(isCount),
  };
  function taskBodies() {
    return calls.filter((c) => c.key === 'POST /api/tasks').map((c) => c.body as CreateTaskBody);
  }
}

const listHandler: Handler = (body) => {
  const b = body as { cloud_id: string; path: string };
  return { data: { items: TREES[b.cloud_id]?.[b.path] ?? [], page_token: null } };
};

function renderPage(kind: 'migrate' | 'sync' = 'migrate') {
  const view = renderWithProviders(
    <>
      <TransferPage kind={kind} />
      <MessageHost />
    </>,
    { path: kind === 'migrate' ? '/transfer' : '/sync', routes: [{ path: '/buy', element: <p>Buy page</p> }] },
  );
  setNavigator((to) => void view.router.navigate(to));
  return view;
}

beforeEach(() => {
  // Toasts of earlier tests would fill the notification queue (5 at a time).
  notifications.clean();
  localStorage.clear();
  resetSessionStore();
  resetForms();
  messagesStore.setState({ dialogs: [], loading: 0 });
  shellStore.setState({ transmissionOpen: false });
  applyAuth(authData());
  sessionStore.setState({
    init: initData(),
    clouds: [
      cloud('c1', { cloud_alias_name: 'Laptop' }),
      cloud('c2', { cloud_alias_name: 'Archive' }),
      cloud('p', { cloud_name: 'google_photos', cloud_alias_name: 'Pics', photos: true }),
    ],
    cloudsLoaded: true,
  });
});
afterEach(() => {
  setNavigator(null);
  vi.unstubAllGlobals();
});

const sourceTree = () => screen.getByTestId('source-tree');
const row = (container: HTMLElement, path: string) => {
  const el = container.querySelector<HTMLElement>(`[data-testid="tree-row"][data-path="${path}"]`);
  if (!el) throw new Error(`no row ${path}`);
  return el;
};
async function tick(path: string) {
  await waitFor(() => row(sourceTree(), path));
  await userEvent.click(within(row(sourceTree(), path)).getByRole('checkbox'));
}

describe('the Transfer screen', { timeout: 30_000 }, () => {
  it('"Please select files first" until something is picked', async () => {
    const api = serve({ 'POST /api/cloud-manager/list': listHandler });
    renderPage();
    await waitFor(() => row(sourceTree(), '/Photos'));
    await userEvent.click(screen.getByTestId('transfer-start'));
    expect(await screen.findByText('Please select files first')).toBeInTheDocument();
    expect(api.tasks()).toEqual([]);
  });

  it('loads folders lazily; a picked folder covers its contents', async () => {
    const api = serve({ 'POST /api/cloud-manager/list': listHandler });
    renderPage();
    await waitFor(() => row(sourceTree(), '/Photos'));
    const listed = () => api.bodies('POST /api/cloud-manager/list').map((b) => (b as { path: string }).path);
    expect(listed()).not.toContain('/Photos');
    await userEvent.click(screen.getByRole('button', { name: 'Open Photos' }));
    await waitFor(() => row(sourceTree(), '/Photos/a.jpg'));
    expect(listed()).toContain('/Photos');
    expect(listed()).not.toContain('/Photos/Trip');
    // Showing a cloud's tree on opening the page is no use of it; opening a folder is the user's.
    const background = (path: string) =>
      api
        .bodies('POST /api/cloud-manager/list')
        .filter((b) => (b as { path: string }).path === path)
        .map((b) => (b as { background?: boolean }).background === true);
    expect(new Set(background('/'))).toEqual(new Set([true]));
    expect(background('/Photos')).toEqual([false]);
    await tick('/Photos/a.jpg');
    expect(screen.getByTestId('source-summary').textContent).toBe('1 item selected');
    await tick('/Photos');
    // The folder replaces the file inside it; its contents show ticked and cannot be unticked alone.
    expect(screen.getByTestId('source-summary').textContent).toBe('1 item selected');
    const child = within(row(sourceTree(), '/Photos/b.jpg')).getByRole('checkbox');
    expect(child).toBeChecked();
    expect(child).toBeDisabled();
    // Refresh reads the open folders again from the service.
    await userEvent.click(within(sourceTree()).getByRole('button', { name: 'Refresh' }));
    await waitFor(() =>
      expect(
        api
          .bodies('POST /api/cloud-manager/list')
          .filter((b) => (b as { refresh?: boolean }).refresh)
          .map((b) => (b as { path: string }).path)
          .sort(),
      ).toEqual(['/', '/Photos']),
    );
  });

  it('the preview says when the target keeps no modification times (a plain WebDAV server)', async () => {
    const dry = plan([item('copy', '/Photos/a.jpg', 1000)], { times_kept: { source: true, target: false } });
    serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': () => ({ data: { task: null, plan: dry } }),
    });
    renderPage();
    await tick('/Photos');
    await userEvent.click(screen.getByTestId('transfer-start'));
    const preview = await screen.findByTestId('plan-preview');
    expect(within(preview).getByTestId('plan-times-not-kept')).toHaveTextContent(
      'Archive does not keep modification times: files written there show the time of the transfer.',
    );
  });

  it('migrates with a filter and a same-name policy: dry run, preview with counts, then the task', async () => {
    const dry = plan([
      item('copy', '/Photos/a.jpg', 1000),
      item('copy', '/Photos/b.jpg', 2000),
      item('update', '/Photos/Trip/c.jpg', 500),
      item('skip', '/Photos/old.jpg', 70),
    ]);
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) =>
        (body as CreateTaskBody).dry_run
          ? { data: { task: null, plan: dry } }
          : { data: { task: makeTask({ state: 8 }), plan: null } },
    });
    renderPage();
    await tick('/Photos');
    await userEvent.click(within(screen.getByTestId('filter-mode')).getByText('All except these'));
    await userEvent.click(screen.getByRole('checkbox', { name: 'PDF' }));
    await userEvent.click(screen.getByRole('radio', { name: 'Transfer only if the size differs' }));
    await userEvent.clear(screen.getByTestId('target-path'));
    await userEvent.type(screen.getByTestId('target-path'), '/Backup');
    await userEvent.click(screen.getByTestId('transfer-start'));

    const preview = await screen.findByTestId('plan-preview');
    const [dryBody] = api.tasks();
    expect(dryBody).toMatchObject({
      task_type: 0,
      dry_run: true,
      from_cloud: { cloud_id: 'c1', paths: ['/Photos'] },
      to_cloud: { cloud_id: 'c2', path: '/Backup' },
      same_name_policy: 'size_differs',
      filter: { mode: 'exclude', categories: ['pdf'] },
      schedule: null,
    });
    expect(dryBody?.sync_mode).toBeUndefined();
    const summary = within(preview).getByTestId('plan-summary');
    expect(within(summary).getByTestId('summary-copy').textContent).toBe('Copy22.93 KB');
    expect(within(summary).getByTestId('summary-update').textContent).toBe('Update1500 B');
    expect(within(summary).getByTestId('summary-delete').textContent).toBe('Delete00 B');
    expect(within(summary).getByTestId('summary-skip').textContent).toBe('Skip170 B');
    expect(within(summary).getByTestId('summary-conflict').textContent).toBe('Conflict00 B');
    expect(within(preview).getByTestId('plan-totals').textContent).toBe('Files to transfer: 3 (3.42 KB).');
    expect(within(preview).getAllByTestId('plan-item')).toHaveLength(4);
    // Browse by action.
    await userEvent.click(within(preview).getByText('Skip (1)'));
    expect(
      within(preview)
        .getAllByTestId('plan-item-path')
        .map((c) => c.textContent),
    ).toEqual(['/Backup/Photos/old.jpg']);

    await userEvent.click(within(preview).getByTestId('preview-start'));
    await waitFor(() => expect(api.tasks()).toHaveLength(2));
    expect(api.tasks()[1]?.dry_run).toBeUndefined();
    await waitFor(() => expect(shellStore.getState().transmissionOpen).toBe(true));
    expect(await screen.findByText('The task has started. Follow it in the transmission list.')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByTestId('plan-preview')).toBeNull());
  });

  it('names with bidi controls show them as marks, isolated, in the trees, the cloud choices and the preview', async () => {
    sessionStore.setState({
      clouds: [cloud('c1', { cloud_alias_name: SPOOFED.cloud }), cloud('c2', { cloud_alias_name: 'Archive' })],
    });
    const spoofedFile = `/${SPOOFED.file}`;
    serve({
      'POST /api/cloud-manager/list': (body) => {
        const b = body as { cloud_id: string; path: string };
        return { data: { items: b.cloud_id === 'c1' && b.path === '/' ? [file(spoofedFile)] : [], page_token: null } };
      },
      'POST /api/tasks': () => ({ data: { task: null, plan: plan([item('copy', spoofedFile)]) } }),
    });
    renderPage();
    await waitFor(() => row(sourceTree(), spoofedFile));
    const tree = row(sourceTree(), spoofedFile);
    expect(tree.querySelector('bdi')?.textContent).toBe('invoice[U+202E]gpj.exe');
    expect(within(tree).getByRole('checkbox', { name: 'Select \u2068invoice[U+202E]gpj.exe\u2069' })).toBeTruthy();
    expect(row(sourceTree(), '/').querySelector('bdi')?.textContent).toContain('Bank[U+202E]txt.exe');
    const options = [...screen.getByTestId('source-cloud').querySelectorAll('option')].map((o) => o.textContent);
    expect(options).toContain('\u2068Bank[U+202E]txt.exe\u2069 · WebDAV');
    await tick(spoofedFile);
    await userEvent.click(screen.getByTestId('transfer-start'));
    const preview = await screen.findByTestId('plan-preview');
    expect(within(preview).getByTestId('plan-item-path').textContent).toBe('/Backup/invoice[U+202E]gpj.exe');
    // The tree row and the plan item carry marks; the labels made by translation show them as text.
    expect(shownBidiMarks()).toEqual(['[U+202E]', '[U+202E]']);
  });

  it('a large plan is browsed page by page from the server (plan_query)', async () => {
    const first = Array.from({ length: 1000 }, (_, i) => item('copy', `/Photos/f${i}.jpg`));
    const big = plan(first, { total_items: 1500 });
    big.summary.copy = { count: 1400, bytes: 140_000 };
    big.summary.skip = { count: 100, bytes: 10_000 };
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) => {
        const b = body as CreateTaskBody;
        if (!b.plan_query) return { data: { task: null, plan: big } };
        const q = b.plan_query;
        const skips = Array.from({ length: q.limit ?? 0 }, (_, i) =>
          item('skip', `/Photos/s${(q.offset ?? 0) + i}.jpg`),
        );
        return { data: { task: null, plan: { ...big, items: skips, total_items: 100 } } };
      },
    });
    renderPage();
    await tick('/Photos');
    await userEvent.click(screen.getByTestId('transfer-start'));
    const preview = await screen.findByTestId('plan-preview');
    await waitFor(() => expect(within(preview).getAllByTestId('plan-item').length).toBeGreaterThan(0));
    await userEvent.click(within(preview).getByText('Skip (100)'));
    await waitFor(() => expect(api.tasks().some((b) => b.plan_query?.actions?.[0] === 'skip')).toBe(true));
    // The first page of all items came with the dry run; only the filtered view asks again.
    expect(api.tasks().filter((b) => b.plan_query && !b.plan_query.actions)).toEqual([]);
    const query = api.tasks().find((b) => b.plan_query)?.plan_query;
    expect(query).toEqual({ actions: ['skip'], offset: 0, limit: 50 });
    await waitFor(() => expect(within(preview).getAllByTestId('plan-item')[0]?.dataset.action).toBe('skip'));
  });

  it('the same cloud on both sides is confirmed first; a target inside the source is refused', async () => {
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': () => ({ data: { task: null, plan: plan([]) } }),
    });
    renderPage();
    await tick('/Photos');
    await userEvent.selectOptions(screen.getByTestId('target-cloud'), 'c1');
    await userEvent.clear(screen.getByTestId('target-path'));
    await userEvent.type(screen.getByTestId('target-path'), '/Photos/Copy');
    await userEvent.click(screen.getByTestId('transfer-start'));
    expect(await screen.findByText('The target path cannot be the same as the source path.')).toBeInTheDocument();
    await userEvent.clear(screen.getByTestId('target-path'));
    await userEvent.type(screen.getByTestId('target-path'), '/Elsewhere');
    await userEvent.click(screen.getByTestId('transfer-start'));
    const dialog = await screen.findByRole('dialog', { name: 'Please confirm' });
    expect(dialog.textContent).toContain('The source and the target are the same cloud drive. Continue?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'No' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Please confirm' })).toBeNull());
    expect(api.tasks()).toEqual([]);
    await userEvent.click(screen.getByTestId('transfer-start'));
    await userEvent.click(
      within(await screen.findByRole('dialog', { name: 'Please confirm' })).getByRole('button', { name: 'Yes' }),
    );
    await waitFor(() => expect(api.tasks()).toHaveLength(1));
    expect(api.tasks()[0]).toMatchObject({
      confirm_same_cloud: true,
      to_cloud: { cloud_id: 'c1', path: '/Elsewhere' },
    });
  });

  it('insufficient space asks whether to continue migrating, and continues with the flag', async () => {
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) => {
        const b = body as CreateTaskBody;
        if (b.dry_run) return { data: { task: null, plan: plan([item('copy', '/notes.txt')]) } };
        if (!b.confirm_insufficient_space) {
          return {
            fail: {
              code: Code.CONFIRM_INSUFFICIENT_SPACE,
              msg: 'Insufficient space on Archive!',
              status: 409,
              data: {
                side: 'target',
                cloud_id: 'c2',
                cloud_name: 'Archive',
                needed: 5 * 1024 ** 3,
                available: 1024 ** 3,
              },
            },
          };
        }
        return { data: { task: makeTask({ state: 8 }), plan: null } };
      },
    });
    renderPage();
    await tick('/notes.txt');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await userEvent.click(await screen.findByTestId('preview-start'));
    const dialog = await screen.findByRole('dialog', { name: 'Please confirm' });
    expect(dialog.textContent).toContain(
      'Insufficient space on Archive! 5.00 GB is needed and 1.00 GB is free. Continue migrating?',
    );
    await userEvent.click(within(dialog).getByRole('button', { name: 'Continue' }));
    await waitFor(() => expect(api.tasks()).toHaveLength(3));
    expect(api.tasks()[2]?.confirm_insufficient_space).toBe(true);
    await waitFor(() => expect(shellStore.getState().transmissionOpen).toBe(true));
  });

  it('the many-deletions prompt names the side that loses the files (a two-way sync may empty the source)', async () => {
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) => {
        const b = body as CreateTaskBody;
        if (b.dry_run) return { data: { task: null, plan: plan([item('copy', '/notes.txt')]) } };
        if (!b.confirm_deletions) {
          const data = { count: 30, total: 40, side: 'source' };
          return { fail: { code: Code.CONFIRM_DELETIONS, msg: 'many deletions', status: 409, data } };
        }
        return { data: { task: makeTask({ state: 8 }), plan: null } };
      },
    });
    renderPage();
    await tick('/notes.txt');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await userEvent.click(await screen.findByTestId('preview-start'));
    const dialog = await screen.findByRole('dialog', { name: 'Please confirm' });
    expect(dialog.textContent).toContain('This sync would delete 30 of the 40 files on the source. Continue?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(api.tasks()).toHaveLength(3));
    expect(api.tasks()[2]?.confirm_deletions).toBe(true);
  });

  it('a photos target takes only pictures and videos', async () => {
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': () => ({ data: { task: null, plan: plan([]) } }),
    });
    renderPage();
    await userEvent.selectOptions(screen.getByTestId('target-cloud'), 'p');
    expect(await screen.findByTestId('photos-note')).toHaveTextContent(
      'Only pictures and videos can be migrated to the photos cloud',
    );
    await userEvent.click(within(screen.getByTestId('filter-mode')).getByText('Only these'));
    expect(screen.getByRole('checkbox', { name: 'PDF' })).toBeDisabled();
    expect(screen.getByRole('checkbox', { name: 'Pictures' })).toBeEnabled();
    await userEvent.click(within(screen.getByTestId('filter-mode')).getByText('No filter'));
    await tick('/notes.txt');
    await userEvent.click(screen.getByTestId('transfer-start'));
    expect(
      await screen.findByText('Only pictures and videos can be migrated to the photos cloud.'),
    ).toBeInTheDocument();
    expect(api.tasks()).toEqual([]);
    await userEvent.click(within(row(sourceTree(), '/notes.txt')).getByRole('checkbox'));
    await tick('/Photos');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await waitFor(() => expect(api.tasks()).toHaveLength(1));
    expect(api.tasks()[0]?.filter).toEqual({ mode: 'include', categories: ['picture', 'video'] });
  });

  it('with billing on, a free user gets the Upgrade modal, whose Upgrade goes to /buy', async () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    const api = serve({ 'POST /api/cloud-manager/list': listHandler });
    const { router } = renderPage();
    await tick('/Photos');
    await userEvent.click(screen.getByTestId('transfer-start'));
    const dialog = await screen.findByRole('dialog', { name: 'Upgrade to Premium' });
    expect(within(dialog).getByText('This feature is available with a premium licence.')).toBeInTheDocument();
    expect(router.state.location.pathname).not.toBe('/buy');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Upgrade' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/buy'));
    expect(api.tasks()).toEqual([]);
  });

  it('with billing on, a licence that has ended offers Renew (4011001) before going to /buy', async () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    const base = authData().user_info;
    sessionStore.setState((s) => ({
      user: { ...s.user, info: { ...base, type: 1, expired: 1, expire: Math.floor(Date.now() / 1000) - 86_400 } },
    }));
    const api = serve({ 'POST /api/cloud-manager/list': listHandler });
    const { router } = renderPage();
    await tick('/Photos');
    await userEvent.click(screen.getByTestId('transfer-start'));
    const dialog = await screen.findByRole('dialog', { name: 'Please confirm' });
    expect(dialog.textContent).toContain('Your current license has expired.');
    expect(router.state.location.pathname).toBe('/transfer');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Renew' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/buy'));
    expect(api.tasks()).toEqual([]);
  });

  it('4011001 closes the transfer modal and offers Renew to /buy; 6007001 shows the cap message', async () => {
    let code: number = Code.LICENSE_EXPIRED;
    serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) =>
        (body as CreateTaskBody).dry_run
          ? { data: { task: null, plan: plan([item('copy', '/notes.txt')]) } }
          : { fail: { code, msg: 'no', status: 402 } },
    });
    const { router } = renderPage();
    await tick('/notes.txt');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await userEvent.click(await screen.findByTestId('preview-start'));
    expect(await screen.findByText('Your current license has expired.')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByTestId('plan-preview')).toBeNull());
    await userEvent.click(screen.getByRole('button', { name: 'Renew' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/buy'));

    code = Code.TRANSACTION_CAP;
    await router.navigate('/transfer');
    await waitFor(() => row(sourceTree(), '/notes.txt'));
    await userEvent.click(screen.getByTestId('transfer-start'));
    await userEvent.click(await screen.findByTestId('preview-start'));
    expect(
      await screen.findByText('Transaction cap exceeded, see the Caps & Alerts page to increase your cap'),
    ).toBeInTheDocument();
  });

  it('4001001 offers Buy now to /buy', async () => {
    serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) =>
        (body as CreateTaskBody).dry_run
          ? { data: { task: null, plan: plan([item('copy', '/notes.txt')]) } }
          : { fail: { code: Code.TRAFFIC_INSUFFICIENT, msg: 'no', status: 402 } },
    });
    const { router } = renderPage();
    await tick('/notes.txt');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await userEvent.click(await screen.findByTestId('preview-start'));
    expect(
      await screen.findByText(
        'Your current remaining transfer data is insufficient. You can get more additional data by purchasing a data package',
      ),
    ).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Buy now' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/buy'));
  });

  it('a scheduled transfer sends the schedule and the time zone, and the preview sets the task', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2025, 4, 15, 10, 20));
    try {
      const api = serve({
        'POST /api/cloud-manager/list': listHandler,
        'POST /api/tasks': (body) =>
          (body as CreateTaskBody).dry_run
            ? { data: { task: null, plan: plan([item('copy', '/notes.txt')]) } }
            : { data: { task: makeTask({ state: 7 }), plan: null } },
      });
      renderPage();
      await tick('/notes.txt');
      await userEvent.click(within(screen.getByTestId('schedule-mode')).getByText('At a set time'));
      const dialog = await screen.findByRole('dialog', { name: 'Scheduled task' });
      await userEvent.click(dialog.querySelector<HTMLElement>('[data-day="2025-05-16"]') as HTMLElement);
      await userEvent.selectOptions(within(dialog).getByTestId('schedule-hour'), '06');
      await userEvent.click(within(dialog).getByRole('checkbox', { name: 'Repeat' }));
      await userEvent.click(within(dialog).getByRole('button', { name: 'Set task' }));
      expect(await screen.findByTestId('schedule-chosen')).toHaveTextContent('Every day at 06:00');
      await userEvent.click(screen.getByTestId('transfer-start'));
      const start = await screen.findByTestId('preview-start');
      expect(start).toHaveTextContent('Set task');
      await userEvent.click(start);
      await waitFor(() => expect(api.tasks()).toHaveLength(2));
      expect(api.tasks()[1]?.schedule).toEqual({
        start_date: '2025-05-16 06:00:00',
        repeat_type: 0,
        hour: 6,
        minute: 0,
        second: 0,
      });
      expect(api.tasks()[1]?.time_zone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
      expect(await screen.findByText('The task is scheduled.')).toBeInTheDocument();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the Sync screen', { timeout: 30_000 }, () => {
  it('explains each sync mode in a sentence', async () => {
    serve({ 'POST /api/cloud-manager/list': listHandler });
    renderPage('sync');
    for (const [mode, sentence] of [
      ['two_way', 'Additions, changes and deletions on either side are copied to the other'],
      ['one_way', 'New and changed files are copied from the source to the target, and nothing is deleted.'],
      ['mirror', 'The target becomes an exact copy of the source'],
      ['incremental', 'Only new files, and newer versions of files with the same name, are copied to the target.'],
    ] as const) {
      expect(screen.getByTestId(`sync-mode-${mode}`).closest('.mantine-Radio-root')?.textContent).toContain(sentence);
    }
  });

  it('a mirror sync that deletes shows what will be deleted and confirms it', async () => {
    const dry = plan([
      item('copy', '/Docs/new.pdf', 300),
      { ...item('delete', '/Docs/old-1.pdf', 40), reason: 'extra_on_target' },
      { ...item('delete', '/Docs/old-2.pdf', 60), reason: 'extra_on_target' },
    ]);
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) =>
        (body as CreateTaskBody).dry_run
          ? { data: { task: null, plan: dry } }
          : { data: { task: makeTask({ task_type: 1, state: 8 }), plan: null } },
    });
    renderPage('sync');
    await waitFor(() => row(sourceTree(), '/Docs'));
    await userEvent.click(within(row(sourceTree(), '/Docs')).getByRole('radio'));
    expect(screen.getByTestId('source-summary').textContent).toBe('Syncing the folder /Docs');
    await userEvent.click(screen.getByRole('radio', { name: /One-way mirror/ }));
    expect(screen.getByTestId('policy-not-used').textContent).toContain('the same-name policy does not apply');
    await waitFor(() => row(screen.getByTestId('target-tree'), '/Backup'));
    await userEvent.click(within(row(screen.getByTestId('target-tree'), '/Backup')).getByRole('radio'));
    expect(screen.getByTestId('target-path')).toHaveValue('/Backup');
    await userEvent.click(screen.getByTestId('transfer-start'));
    const preview = await screen.findByTestId('plan-preview');
    expect(within(preview).getByTestId('summary-delete').textContent).toBe('Delete2100 B');
    expect(preview.textContent).toContain('2 files and folders (100 B) will be deleted.');
    await userEvent.click(within(preview).getByTestId('preview-start'));
    const confirmView = await screen.findByTestId('deletions-confirm');
    expect(confirmView.textContent).toContain(
      'These 2 files and folders (100 B) will be deleted on Archive. Are you sure?',
    );
    await waitFor(() =>
      expect(
        within(confirmView)
          .getAllByTestId('plan-item-path')
          .map((c) => c.textContent),
      ).toEqual(['/Backup/Docs/old-1.pdf', '/Backup/Docs/old-2.pdf']),
    );
    expect(api.tasks()).toHaveLength(1);
    await userEvent.click(within(confirmView).getByRole('button', { name: 'Delete and sync' }));
    await waitFor(() => expect(api.tasks()).toHaveLength(2));
    expect(api.tasks()[1]).toMatchObject({
      task_type: 1,
      sync_mode: 'mirror',
      confirm_deletions: true,
      from_cloud: { cloud_id: 'c1', paths: ['/Docs'] },
      to_cloud: { cloud_id: 'c2', path: '/Backup' },
    });
    expect(api.tasks()[1]?.same_name_policy).toBeUndefined();
  });
});

describe('the Google Docs choice', { timeout: 30_000 }, () => {
  const addDrive = (kind: 'google_drive' | 'google_drive_shared') =>
    sessionStore.setState((st) => ({
      clouds: [...st.clouds, cloud('g', { cloud_name: kind, cloud_alias_name: 'Work Drive' })],
    }));

  it('shows only for a Google Drive source, and sends the choice with the task', async () => {
    addDrive('google_drive');
    const dry = plan([item('copy', '/Reports/notes.txt', 10)]);
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': () => ({ data: { task: null, plan: dry } }),
    });
    renderPage();
    // The first cloud (WebDAV) is the source: no Google Docs there, no choice, nothing sent.
    await waitFor(() => row(sourceTree(), '/Photos'));
    expect(screen.queryByTestId('google-docs')).not.toBeInTheDocument();
    await tick('/Photos');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await screen.findByTestId('plan-preview');
    expect(api.tasks()[0]).not.toHaveProperty('google_docs');
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));

    await userEvent.selectOptions(screen.getByTestId('source-cloud'), 'g');
    const choice = await screen.findByTestId('google-docs');
    expect(choice.textContent).toContain('Google Docs, Sheets and Slides');
    expect(within(choice).getByRole('radio', { name: 'Export them as Office files (Drawings as PDF)' })).toBeChecked();
    await userEvent.click(within(choice).getByRole('radio', { name: 'Skip them' }));
    await tick('/Reports');
    await userEvent.click(screen.getByTestId('transfer-start'));
    await waitFor(() => expect(api.tasks()).toHaveLength(2));
    expect(api.tasks()[1]).toMatchObject({ from_cloud: { cloud_id: 'g', paths: ['/Reports'] }, google_docs: 'skip' });

    // Back to a source without Google Docs: the choice goes away again.
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await userEvent.selectOptions(screen.getByTestId('source-cloud'), 'c1');
    await waitFor(() => expect(screen.queryByTestId('google-docs')).not.toBeInTheDocument());
  });

  it('shows on the Sync screen for "Shared with me" too, exporting by default', async () => {
    addDrive('google_drive_shared');
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': () => ({ data: { task: null, plan: plan([]) } }),
    });
    renderPage('sync');
    await userEvent.selectOptions(screen.getByTestId('source-cloud'), 'g');
    const choice = await screen.findByTestId('google-docs');
    expect(within(choice).getByRole('radio', { name: 'Export them as Office files (Drawings as PDF)' })).toBeChecked();
    await waitFor(() => row(sourceTree(), '/Reports'));
    await userEvent.click(within(row(sourceTree(), '/Reports')).getByRole('radio'));
    await userEvent.click(screen.getByTestId('transfer-start'));
    await waitFor(() => expect(api.tasks()).toHaveLength(1));
    expect(api.tasks()[0]).toMatchObject({ task_type: 1, google_docs: 'export' });
  });
});

describe('the guide steps', () => {
  it('the Transfer screen shows migrate-1 and migrate-2 on its source and target panels; Sync shows sync-1 and sync-2', async () => {
    serve({ 'POST /api/cloud-manager/list': listHandler });
    guideStore.setState({ acknowledged: {}, chain: null, pending: false });
    const view = renderPage();
    await waitFor(() =>
      expect(guideStore.getState().chain?.steps.map((s) => s.id)).toEqual(['migrate-1', 'migrate-2']),
    );
    expect(document.querySelector('[data-guide="migrate-1"]')?.textContent).toContain('Files to transfer');
    expect(document.querySelector('[data-guide="migrate-2"]')?.textContent).toContain('Where they go');
    view.unmount();
    guideStore.setState({ acknowledged: {}, chain: null, pending: false });
    renderPage('sync');
    await waitFor(() => expect(guideStore.getState().chain?.steps.map((s) => s.id)).toEqual(['sync-1', 'sync-2']));
    expect(document.querySelector('[data-guide="sync-1"]')?.textContent).toContain('Folder to sync from');
    expect(document.querySelector('[data-guide="sync-2"]')?.textContent).toContain('Sync mode');
  });
});

describe('the filter section', { timeout: 30_000 }, () => {
  it('offers rules, sizes and ages, and counts the files that match with a dry run', { timeout: 30_000 }, async () => {
    const api = serve({
      'POST /api/cloud-manager/list': listHandler,
      'POST /api/tasks': (body) => {
        const b = body as CreateTaskBody;
        if (b.filter?.max_size === 'huge')
          return {
            fail: {
              code: Code.BAD_REQUEST,
              msg: 'This filter rule or value is not valid: max_size huge',
              status: 400,
            },
          };
        // The server counts what the filter lets through: here, a .jpg rule leaves one file of three.
        const matched = b.filter?.rules?.includes('- *.jpg') ? 1 : 3;
        return { data: { task: null, plan: plan([], { files_matched: matched }) } };
      },
    });
    renderPage('sync');
    await waitFor(() => row(sourceTree(), '/Photos'));
    await userEvent.click(within(row(sourceTree(), '/Photos')).getByRole('radio'));
    // No filter yet: nothing is counted.
    expect(screen.queryByTestId('filter-count')).toBeNull();
    await userEvent.type(screen.getByTestId('filter-rules'), '# holiday pictures only{enter}- *.jpg{enter}+ Trip/**');
    await userEvent.type(screen.getByTestId('filter-min-size'), '1k');
    await userEvent.type(screen.getByTestId('filter-max-age'), '30d');
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toBe('1 file matches'));
    // Counted with a dry run of the task as the form stands, one item long; typing was not counted key by key.
    const last = api.counts().at(-1);
    expect(last).toMatchObject({
      dry_run: true,
      plan_query: { limit: 1 },
      from_cloud: { cloud_id: 'c1', paths: ['/Photos'] },
      filter: { mode: 'include', categories: [], rules: ['- *.jpg', '+ Trip/**'], min_size: '1k', max_age: '30d' },
    });
    expect(api.counts().length).toBeLessThan(5);

    // A value the server cannot use shows its message in place of the count.
    await userEvent.type(screen.getByTestId('filter-max-size'), 'huge');
    await waitFor(() =>
      expect(screen.getByTestId('filter-count').textContent).toBe(
        'This filter rule or value is not valid: max_size huge',
      ),
    );
    await userEvent.clear(screen.getByTestId('filter-max-size'));
    await userEvent.clear(screen.getByTestId('filter-rules'));
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toBe('3 files match'));

    // The task carries the same filter.
    await waitFor(() => row(screen.getByTestId('target-tree'), '/Backup'));
    await userEvent.click(within(row(screen.getByTestId('target-tree'), '/Backup')).getByRole('radio'));
    await userEvent.click(screen.getByTestId('transfer-start'));
    await waitFor(() => expect(api.tasks()).toHaveLength(1));
    expect(api.tasks()[0]?.filter).toEqual({ mode: 'include', categories: [], min_size: '1k', max_age: '30d' });
  });
});
