import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FileItem, TrashItem } from '@skyferry/contract';
import { cloud, mockApi, renderWithProviders, type RecordedCall } from '../../test/utils.tsx';
import { exportStore } from '../export/store.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { resetRunner } from '../task-panel/runner.ts';
import { copyMoveBody, targetProblem } from './CopyMoveDialog.tsx';
import { ExplorerPage } from './ExplorerPage.tsx';
import { commandOfKey } from './FileList.tsx';
import { stubViewportSize } from './layout-stub.ts';
import { decodePaneDrag, encodePaneDrag } from './pane-drag.ts';
import { setLanguage } from '../../i18n/index.ts';

const item = (path: string, type: 0 | 1, size = 0): FileItem => ({
  id: path,
  name: path.split('/').pop() ?? '',
  path,
  type,
  size,
  modified: 0,
  mime_type: null,
});

const ROOT = [item('/Photos', 0), item('/Élan report.pdf', 1, 2048), item('/notes.txt', 1, 10), item('/Work', 0)];
const TRASH: TrashItem[] = [
  { id: 't1', name: 'old.txt', original_path: '/Docs/old.txt', type: 1, size: 5, deleted_at: Date.UTC(2024, 4, 1) },
  { id: 't2', name: 'Drafts', original_path: '/Drafts', type: 0, size: 0, deleted_at: 0 },
];

function render(extra: Record<string, (call: RecordedCall) => unknown> = {}) {
  const api = mockApi({
    'POST /api/cloud-manager/list': (c) => {
      const path = (c.body as { path: string }).path;
      if (path === '/') return { items: ROOT, page_token: null };
      return { items: [item(`${path}/Inbox`, 0)], page_token: null };
    },
    ...extra,
  });
  renderWithProviders(
    <>
      <ExplorerPage />
      <MessageHost />
    </>,
    { path: '/manage/explorer?cloud_index=0&is_open=1&_=1' },
  );
  return api;
}

const names = () => screen.queryAllByTestId('file-row').map((r) => r.getAttribute('data-name'));
const row = (n: string) =>
  screen.getAllByTestId('file-row').find((r) => r.getAttribute('data-name') === n) as HTMLElement;

// Journeys of many clicks and keys: more time than a unit test's default on a busy machine.
vi.setConfig({ testTimeout: 20_000 });

let restoreSize = () => undefined as void;

beforeEach(() => {
  restoreSize = stubViewportSize();
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState((s) => ({
    user: { ...s.user, access_token: 'token' },
    clouds: [cloud('c1', { cloud_alias_name: 'Team files' }), cloud('c2', { cloud_alias_name: 'NAS' })],
    cloudsLoaded: true,
  }));
});
afterEach(() => {
  restoreSize();
  resetRunner();
  messagesStore.setState({ dialogs: [], loading: 0 });
  vi.unstubAllGlobals();
});

describe('copy and move to another cloud or folder', () => {
  it('refuses the folder the selection is in and a folder inside a selected one; another cloud is always fine', () => {
    const from = { cloudId: 'c1', folder: '/', items: [item('/Work', 0), item('/a.txt', 1)] };
    expect(targetProblem(from, { cloudId: 'c1', path: '/' })).toBe('sameFolder');
    expect(targetProblem(from, { cloudId: 'c1', path: '/Work/Inbox' })).toBe('intoItself');
    expect(targetProblem(from, { cloudId: 'c1', path: '/Work' })).toBe('intoItself');
    expect(targetProblem(from, { cloudId: 'c1', path: '/Workshop' })).toBeNull();
    expect(targetProblem(from, { cloudId: 'c2', path: '/' })).toBeNull();
    expect(copyMoveBody('move', from, { cloudId: 'c2', path: '/In' })).toEqual({
      task_type: 0,
      from_cloud: { cloud_id: 'c1', paths: ['/Work', '/a.txt'] },
      to_cloud: { cloud_id: 'c2', path: '/In' },
      move: true,
    });
    expect(copyMoveBody('copy', from, { cloudId: 'c1', path: '/In' })).toMatchObject({ confirm_same_cloud: true });
    expect(copyMoveBody('copy', from, { cloudId: 'c1', path: '/In' })).not.toHaveProperty('move');
  });

  it('"Move to…" the selection into a folder of another cloud starts a server task that moves, and opens the task list', async () => {
    const api = render({
      'POST /api/tasks': (c) => ({ task: { id: 'task-1', ...(c.body as object) } }),
    });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.click(row('notes.txt'));
    await user.keyboard('{Control>}');
    await user.click(row('Work'));
    await user.keyboard('{/Control}');
    await user.click(screen.getByRole('button', { name: 'Move to…' }));
    const dialog = await screen.findByTestId('copy-move-dialog');
    expect(within(dialog).getByTestId('copy-move-what')).toHaveTextContent('2 items');
    // Its own folder is refused at first (the dialog starts on this cloud's root).
    expect(within(dialog).getByTestId('copy-move-problem')).toHaveTextContent('already in this folder');
    expect(within(dialog).getByRole('button', { name: 'Move' })).toBeDisabled();
    await user.selectOptions(within(dialog).getByRole('combobox', { name: 'To cloud drive' }), 'c2');
    await user.click(await within(dialog).findByRole('radio', { name: 'Choose Photos' }));
    expect(within(dialog).queryByTestId('copy-move-problem')).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Move' }));
    await waitFor(() => expect(api.find('POST /api/tasks')).toHaveLength(1));
    expect(api.find('POST /api/tasks')[0]?.body).toEqual({
      task_type: 0,
      from_cloud: { cloud_id: 'c1', paths: ['/Work', '/notes.txt'] },
      to_cloud: { cloud_id: 'c2', path: '/Photos' },
      move: true,
    });
    await screen.findByText('The move has started; its progress is in the task list.');
  });
});

describe('deleted files', () => {
  it('lists the trash, restores the picked items and reads the folder again, and deletes for good after asking', async () => {
    const api = render({
      'POST /api/cloud-manager/trash/list': () => ({
        supported: true,
        service_trash: true,
        can_purge: true,
        can_empty: true,
        items: TRASH,
        page_token: null,
      }),
      'POST /api/cloud-manager/trash/restore': () => ({ restored: [item('/Docs/old.txt', 1, 5)], failed: [] }),
      'POST /api/cloud-manager/trash/delete': (c) => ({ deleted: (c.body as { ids: string[] }).ids, failed: [] }),
    });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Deleted files' }));
    const dialog = await screen.findByTestId('trash-dialog');
    await waitFor(() => expect(within(dialog).getAllByTestId('trash-row')).toHaveLength(2));
    expect(within(dialog).getByText('/Docs/old.txt')).toBeInTheDocument();
    const lists = api.find('POST /api/cloud-manager/list').length;
    await user.click(within(dialog).getByRole('checkbox', { name: 'old.txt' }));
    await user.click(within(dialog).getByRole('button', { name: 'Restore' }));
    await waitFor(() => expect(api.find('POST /api/cloud-manager/trash/restore')).toHaveLength(1));
    expect(api.find('POST /api/cloud-manager/trash/restore')[0]?.body).toEqual({ cloud_id: 'c1', ids: ['t1'] });
    await waitFor(() => expect(api.find('POST /api/cloud-manager/list').length).toBeGreaterThan(lists));

    await user.click(within(dialog).getByRole('checkbox', { name: 'Drafts' }));
    await user.click(within(dialog).getByRole('button', { name: 'Delete for good' }));
    const ask = await screen.findByText('Delete the selected items for good? This cannot be undone.');
    expect(ask).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(api.find('POST /api/cloud-manager/trash/delete')).toHaveLength(1));
    expect(api.find('POST /api/cloud-manager/trash/delete')[0]?.body).toEqual({ cloud_id: 'c1', ids: ['t2'] });
  });

  const noTrash = (serviceTrash: boolean) => ({
    supported: false,
    service_trash: serviceTrash,
    can_purge: false,
    can_empty: false,
    items: [],
    page_token: null,
  });

  it('a cloud without a trash says what is deleted there is gone for good', async () => {
    render({ 'POST /api/cloud-manager/trash/list': () => noTrash(false) });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    await userEvent.click(screen.getByRole('button', { name: 'Deleted files' }));
    expect(await screen.findByTestId('trash-unsupported')).toHaveTextContent('what is deleted here is gone for good');
  });

  it('a cloud whose trash only its own website shows (OneDrive) says so, in the user’s language', async () => {
    await setLanguage('de');
    try {
      render({ 'POST /api/cloud-manager/trash/list': () => noTrash(true) });
      await waitFor(() => expect(names()).toContain('notes.txt'));
      await userEvent.click(screen.getByRole('button', { name: 'Gelöschte Dateien' }));
      expect(await screen.findByTestId('trash-unsupported')).toHaveTextContent(
        'Dieses Cloud-Laufwerk legt gelöschte Dateien in einen eigenen Papierkorb',
      );
    } finally {
      await setLanguage('en');
    }
  });

  it('a trash that can only be restored from (a personal Dropbox) offers neither delete for good nor empty, and says why', async () => {
    render({
      'POST /api/cloud-manager/trash/list': () => ({
        supported: true,
        service_trash: true,
        can_purge: false,
        can_empty: false,
        items: TRASH,
        page_token: null,
      }),
    });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Deleted files' }));
    const dialog = await screen.findByTestId('trash-dialog');
    await waitFor(() => expect(within(dialog).getAllByTestId('trash-row')).toHaveLength(2));
    await user.click(within(dialog).getByRole('checkbox', { name: 'old.txt' }));
    expect(within(dialog).getByRole('button', { name: 'Restore' })).toBeEnabled();
    expect(within(dialog).getByRole('button', { name: 'Delete for good' })).toBeDisabled();
    expect(within(dialog).getByRole('button', { name: 'Empty deleted files' })).toBeDisabled();
    expect(within(dialog).getByTestId('trash-no-purge')).toHaveTextContent(
      'does not let other apps delete these for good',
    );
  });
});

describe('search', () => {
  it('filters this folder as one types (accents and case ignored), then searches below it step by step', async () => {
    const steps = [
      { items: [item('/Work/2024/Elan plan.txt', 1, 3)], page_token: 'next', scanned: 200, truncated: false },
      { items: [item('/Photos/élan', 0)], page_token: null, scanned: 260, truncated: false },
    ];
    const api = render({ 'POST /api/cloud-manager/search': () => steps.shift() });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.type(screen.getByTestId('explorer-filter'), 'ELAN');
    expect(names()).toEqual(['Élan report.pdf']);
    await user.click(screen.getByTestId('deep-search'));
    await waitFor(() => expect(screen.getAllByTestId('deep-search-item')).toHaveLength(2));
    expect(screen.getByTestId('deep-search-progress')).toHaveTextContent('2 matches found');
    const calls = api.find('POST /api/cloud-manager/search');
    expect(calls.map((c) => c.body)).toEqual([
      { cloud_id: 'c1', path: '/', query: 'ELAN', page_token: null },
      { cloud_id: 'c1', path: '/', query: 'ELAN', page_token: 'next' },
    ]);
    // A find opens the folder it is in.
    await user.click(screen.getByText('Elan plan.txt'));
    await waitFor(() =>
      expect(api.find('POST /api/cloud-manager/list').at(-1)?.body).toMatchObject({ path: '/Work/2024' }),
    );
  });
});

describe('keyboard and context menu', () => {
  it('F2 renames, Delete deletes (Cmd+Backspace on a Mac)', () => {
    expect(commandOfKey('F2', { meta: false, mac: false })).toBe('rename');
    expect(commandOfKey('Delete', { meta: false, mac: false })).toBe('delete');
    expect(commandOfKey('Backspace', { meta: true, mac: true })).toBe('delete');
    expect(commandOfKey('Backspace', { meta: false, mac: true })).toBeNull();
    expect(commandOfKey('Backspace', { meta: true, mac: false })).toBeNull();
  });

  it('F2 opens Rename on the selected item, Delete asks to delete the selection; the count shows its size', async () => {
    render({ 'POST /api/cloud-manager/delete': () => ({ deleted: ['/notes.txt'], failed: [], trashed: true }) });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.click(row('notes.txt'));
    await user.keyboard('{Control>}');
    await user.click(row('Élan report.pdf'));
    await user.keyboard('{/Control}');
    expect(screen.getByTestId('selection-count')).toHaveTextContent('2 selected · 2.01 KB');
    await user.click(row('notes.txt'));
    await user.keyboard('{F2}');
    const rename = await screen.findByRole('dialog', { name: 'Rename' });
    expect(within(rename).getByRole('textbox')).toHaveValue('notes.txt');
    await user.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Rename' })).not.toBeInTheDocument());
    screen.getByRole('grid').focus();
    await user.keyboard('{Delete}');
    expect(await screen.findByText(/notes\.txt.*deleted files/)).toBeInTheDocument();
  });

  it('a right click on a row selects it and opens the menu of what can be done with it', async () => {
    render();
    await waitFor(() => expect(names()).toContain('notes.txt'));
    fireEvent.contextMenu(row('notes.txt'));
    const menu = await screen.findByTestId('explorer-context-menu');
    expect(screen.getByTestId('selection-count')).toHaveTextContent('1 selected');
    expect(await within(menu).findByRole('menuitem', { name: 'Copy to…' })).toBeInTheDocument();
    await userEvent.click(within(menu).getByRole('menuitem', { name: 'Rename' }));
    expect(await screen.findByRole('dialog', { name: 'Rename' })).toBeInTheDocument();
  });

  it('New folder focuses its name field; a pasted name with "/" stays as pasted, says why, and cannot be sent', async () => {
    const api = render({ 'POST /api/cloud-manager/mkdir': () => '/x' });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'New folder' }));
    const input = await screen.findByTestId('name-input');
    await waitFor(() => expect(input).toHaveFocus());
    await user.clear(input);
    await user.paste('2024/Q1');
    expect(input).toHaveValue('2024/Q1');
    expect(screen.getByTestId('name-blocked')).toHaveTextContent('/ : * ? \\ " < > |');
    expect(screen.getByRole('button', { name: 'Create' })).toBeDisabled();
    await user.keyboard('{Enter}');
    expect(api.find('POST /api/cloud-manager/mkdir')).toHaveLength(0);
  });
});

/** A stand-in for the browser's DataTransfer (jsdom has none). */
function dataTransfer() {
  const data = new Map<string, string>();
  return {
    get types() {
      return [...data.keys()];
    },
    setData: (type: string, value: string) => data.set(type, value),
    getData: (type: string) => data.get(type) ?? '',
    effectAllowed: 'all',
    dropEffect: 'none',
  };
}

describe('two panes', () => {
  it('a drop carries rows only when its data is a drag of explorer rows', () => {
    const rows = { cloudId: 'c1', folder: '/', items: [item('/a.txt', 1, 3)] };
    expect(decodePaneDrag(encodePaneDrag(rows))).toEqual(rows);
    for (const junk of [
      '',
      'text',
      '{"cloudId":"c1","folder":"/","items":[]}',
      '{"cloudId":1,"folder":"/","items":[]}',
    ])
      expect(decodePaneDrag(junk), junk).toBeNull();
    expect(
      decodePaneDrag('{"cloudId":"c1","folder":"/","items":[{"path":"/x"},{"path":"/y","name":"y","type":1}]}')?.items,
    ).toEqual([{ path: '/y', name: 'y', type: 1 }]);
  });

  it('shows another cloud beside the folder; rows dragged onto it are copied there as a server task', async () => {
    const api = render({ 'POST /api/tasks': (c) => ({ task: { id: 'task-2', ...(c.body as object) } }) });
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const user = userEvent.setup();
    await user.click(screen.getByTestId('two-panes'));
    const pane = await screen.findByTestId('side-pane');
    expect(within(pane).getByTestId('side-pane-cloud')).toHaveValue('c2');
    await waitFor(() => expect(within(pane).getAllByTestId('file-row').length).toBeGreaterThan(0));
    await user.click(row('notes.txt'));
    const dt = dataTransfer();
    fireEvent.dragStart(row('notes.txt'), { dataTransfer: dt });
    const zone = within(pane).getByTestId('side-pane-drop');
    fireEvent.dragOver(zone, { dataTransfer: dt });
    fireEvent.drop(zone, { dataTransfer: dt });
    const dialog = await screen.findByTestId('drop-dialog');
    expect(dialog).toHaveTextContent('notes.txt');
    await user.click(within(dialog).getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(api.find('POST /api/tasks')).toHaveLength(1));
    expect(api.find('POST /api/tasks')[0]?.body).toEqual({
      task_type: 0,
      from_cloud: { cloud_id: 'c1', paths: ['/notes.txt'] },
      to_cloud: { cloud_id: 'c2', path: '/' },
    });
  });

  it('a drop of rows back on their own folder does nothing', async () => {
    render();
    await waitFor(() => expect(names()).toContain('notes.txt'));
    const dt = dataTransfer();
    fireEvent.dragStart(row('notes.txt'), { dataTransfer: dt });
    fireEvent.drop(screen.getByTestId('drop-zone'), { dataTransfer: dt });
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByTestId('drop-dialog')).not.toBeInTheDocument();
  });
});

describe('Export to', () => {
  it('opens the Export to dialog for the selected files (folders left out), each named by its cloud and path', async () => {
    exportStore.setState({ request: null, results: null });
    render();
    const user = userEvent.setup();
    await waitFor(() => expect(names()).toContain('notes.txt'));
    await user.click(row('notes.txt'));
    await user.keyboard('{Control>}');
    await user.click(row('Work'));
    await user.keyboard('{/Control}');
    await user.click(screen.getByTestId('explorer-export'));
    expect(exportStore.getState().request?.files).toEqual([
      { filename: 'notes.txt', size: 10, source: { cloud_id: 'c1', path: '/notes.txt' } },
    ]);
    exportStore.getState().request?.resolve({ outcome: 'cancelled' });
    exportStore.setState({ request: null, results: null });
  });
});
