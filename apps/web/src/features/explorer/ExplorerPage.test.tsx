import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, type FileItem } from '@skyferry/contract';
import {
  Fail,
  SPOOFED,
  cloud,
  mockApi,
  renderWithProviders,
  shownBidiMarks,
  type RecordedCall,
} from '../../test/utils.tsx';
import { MessageHost } from '../messages/MessageHost.tsx';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { resetRunner } from '../task-panel/runner.ts';
import { messagesStore } from '../messages/store.ts';
import { ExplorerPage } from './ExplorerPage.tsx';
import { stubViewportSize } from './layout-stub.ts';

const item = (name: string, type: 0 | 1, size = 0, modified = 0): FileItem => ({
  id: `/${name}`,
  name,
  path: `/${name}`,
  type,
  size,
  modified,
  mime_type: null,
});

const ROOT = [
  item('b.txt', 1, 300, Date.UTC(2024, 0, 3)),
  item('Photos', 0),
  item('a.txt', 1, 10, Date.UTC(2024, 0, 1)),
  item('c.bin', 1, 20, Date.UTC(2024, 0, 2)),
];

function render(listing: (call: RecordedCall) => unknown, extra: Record<string, (call: RecordedCall) => unknown> = {}) {
  const api = mockApi({ 'POST /api/cloud-manager/list': listing, ...extra });
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

// jsdom has no layout: elements get a viewport's size so the virtualized list renders its rows.
let restoreSize = () => undefined as void;

beforeEach(() => {
  restoreSize = stubViewportSize();
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ tempClouds: [cloud('c1', { cloud_alias_name: 'Team files' })], cloudsLoaded: true });
});
afterEach(() => {
  restoreSize();
  resetRunner();
  // A prompt left open by one test belongs to its screen, not the next test's.
  messagesStore.setState({ dialogs: [], loading: 0 });
  vi.unstubAllGlobals();
});

describe('explorer', () => {
  it('lists folders first, sorts by each column, and selects with Shift and Ctrl', async () => {
    const api = render(() => ({ items: ROOT, page_token: null }));
    await waitFor(() => expect(names()).toEqual(['Photos', 'a.txt', 'b.txt', 'c.bin']));
    expect(api.find('POST /api/cloud-manager/list')[0]?.body).toMatchObject({ cloud_id: 'c1', path: '/' });
    await userEvent.click(screen.getByTestId('sort-size'));
    expect(names()).toEqual(['Photos', 'a.txt', 'c.bin', 'b.txt']);
    await userEvent.click(screen.getByTestId('sort-size'));
    expect(names()).toEqual(['Photos', 'b.txt', 'c.bin', 'a.txt']);
    expect(screen.getByTestId('sort-size')).toHaveAttribute('aria-sort', 'descending');
    await userEvent.click(screen.getByTestId('sort-modified'));
    expect(names()).toEqual(['Photos', 'b.txt', 'c.bin', 'a.txt']);
    await userEvent.click(screen.getByTestId('sort-name'));
    const row = (n: string) =>
      screen.getAllByTestId('file-row').find((r) => r.getAttribute('data-name') === n) as HTMLElement;
    const user = userEvent.setup();
    await user.click(row('a.txt'));
    await user.keyboard('{Shift>}');
    await user.click(row('c.bin'));
    await user.keyboard('{/Shift}');
    expect(screen.getByTestId('selection-count')).toHaveTextContent('3 selected');
    await user.keyboard('{Control>}');
    await user.click(row('b.txt'));
    await user.keyboard('{/Control}');
    expect(screen.getByTestId('selection-count')).toHaveTextContent('2 selected');
    expect(screen.getByRole('button', { name: 'Rename' })).toBeDisabled();
  });

  it('shows the empty state, and the error state with the server message', async () => {
    render((call) =>
      (call.body as { path: string }).path === '/'
        ? { items: [], page_token: null }
        : new Fail(Code.NOT_FOUND, 'The path does not exist.', 404),
    );
    await screen.findByTestId('explorer-empty');
    expect(screen.getByText('This folder is empty.')).toBeInTheDocument();
  });

  it('a missing folder shows "The path does not exist."', async () => {
    render(() => new Fail(Code.NOT_FOUND, 'The path does not exist.', 404));
    const error = await screen.findByTestId('explorer-error');
    expect(within(error).getByText('The path does not exist.')).toBeInTheDocument();
  });

  it('pages through a folder with page_token', async () => {
    const api = render((call) => {
      const token = (call.body as { page_token: string | null }).page_token;
      return token === null
        ? { items: [item('one', 1)], page_token: 'next' }
        : { items: [item('two', 1)], page_token: null };
    });
    await waitFor(() => expect(names()).toEqual(['one', 'two']));
    expect(
      api.find('POST /api/cloud-manager/list').map((c) => (c.body as { page_token: string | null }).page_token),
    ).toEqual([null, 'next']);
  });

  it('uploads picked files with the Upload button into the open folder, then lists the folder afresh', async () => {
    let uploaded = false;
    const api = render(() => ({ items: uploaded ? [...ROOT, item('new.txt', 1, 5)] : ROOT, page_token: null }), {
      'PUT /api/cloud-manager/files': () => {
        uploaded = true;
        return item('new.txt', 1, 5);
      },
    });
    await waitFor(() => expect(names()).toHaveLength(4));
    await userEvent.upload(screen.getByTestId('upload-input'), new File(['hello'], 'new.txt'));
    await waitFor(() => expect(names()).toContain('new.txt'));
    const put = api.find('PUT /api/cloud-manager/files')[0];
    expect([put?.query.get('cloud_id'), put?.query.get('path')]).toEqual(['c1', '/new.txt']);
    expect(screen.getByTestId('task-panel-title')).toHaveTextContent('Tasks (1)');
    const lists = api.find('POST /api/cloud-manager/list');
    expect((lists[lists.length - 1]?.body as { refresh?: boolean }).refresh).toBe(true);
  });

  it('Refresh reads the folder from the service again (refresh: true)', async () => {
    const api = render(() => ({ items: ROOT, page_token: null }));
    await waitFor(() => expect(names()).toHaveLength(4));
    expect((api.find('POST /api/cloud-manager/list')[0]?.body as { refresh?: boolean }).refresh).toBeFalsy();
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(api.find('POST /api/cloud-manager/list')).toHaveLength(2));
    expect((api.find('POST /api/cloud-manager/list')[1]?.body as { refresh?: boolean }).refresh).toBe(true);
  });

  it('new folder: a forbidden character is refused as it is typed, and the folder is created', async () => {
    const api = render(() => ({ items: ROOT, page_token: null }), {
      'POST /api/cloud-manager/mkdir': () => '/Plans2025',
    });
    await waitFor(() => expect(names()).toHaveLength(4));
    await userEvent.click(screen.getByRole('button', { name: 'New folder' }));
    const input = await screen.findByTestId('name-input');
    await userEvent.clear(input);
    await userEvent.type(input, 'Plans:2025?');
    expect(input).toHaveValue('Plans2025');
    expect(screen.getByTestId('name-blocked')).toHaveTextContent('/ : * ? \\ " < > |');
    await userEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.find('POST /api/cloud-manager/mkdir')).toHaveLength(1));
    expect(api.find('POST /api/cloud-manager/mkdir')[0]?.body).toMatchObject({
      cloud_id: 'c1',
      path: '/',
      folder_name: 'Plans2025',
    });
  });

  it('delete asks first, and sends the selected paths only after Yes', async () => {
    const api = render(() => ({ items: ROOT, page_token: null }), {
      'POST /api/cloud-manager/delete': () => ({ deleted: ['/a.txt'], failed: [], trashed: true }),
    });
    await waitFor(() => expect(names()).toHaveLength(4));
    await userEvent.click(
      screen.getAllByTestId('file-row').find((r) => r.getAttribute('data-name') === 'a.txt') as HTMLElement,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Delete "a.txt"?');
    // The spec's restore window is said before the deletion, and again once the items are in the trash.
    expect(dialog).toHaveTextContent(
      "Deleted items can be restored from the cloud drive's deleted files within 30 days.",
    );
    expect(api.find('POST /api/cloud-manager/delete')).toHaveLength(0);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(api.find('POST /api/cloud-manager/delete')).toHaveLength(1));
    expect(api.find('POST /api/cloud-manager/delete')[0]?.body).toMatchObject({ cloud_id: 'c1', files: ['/a.txt'] });
    expect(
      await screen.findByText(/^Moved .* deleted files\. Deleted items can be restored .* within 30 days\.$/),
    ).toBeInTheDocument();
  });

  it('names with bidi controls show them as marks, isolated, in the list, the heading, the path bar and the delete prompt', async () => {
    sessionStore.setState({ tempClouds: [cloud('c1', { cloud_alias_name: SPOOFED.cloud })], cloudsLoaded: true });
    const folder = `Reports\u202Efdp`;
    render((call) =>
      (call.body as { path: string }).path === '/'
        ? { items: [item(SPOOFED.file, 1, 10), item(folder, 0)], page_token: null }
        : { items: [], page_token: null },
    );
    await waitFor(() => expect(names()).toHaveLength(2));
    const row = (n: string) =>
      screen.getAllByTestId('file-row').find((r) => r.getAttribute('data-name') === n) as HTMLElement;
    // The name cell: in <bdi>, the control a visible mark, the tooltip and checkbox label alike.
    const cell = within(row(SPOOFED.file)).getByTitle('\u2068invoice[U+202E]gpj.exe\u2069');
    expect(cell.querySelector('bdi')?.textContent).toBe('invoice[U+202E]gpj.exe');
    expect(
      within(row(SPOOFED.file)).getByRole('checkbox', { name: '\u2068invoice[U+202E]gpj.exe\u2069' }),
    ).toBeInTheDocument();
    expect(
      within(screen.getByTestId('explorer')).getByRole('heading', { level: 2 }).querySelector('bdi')?.textContent,
    ).toBe('Bank[U+202E]txt.exe');
    expect(shownBidiMarks()).toEqual(['[U+202E]', '[U+202E]', '[U+202E]', '[U+202E]']);

    await userEvent.click(row(SPOOFED.file));
    await userEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Delete "\u2068invoice[U+202E]gpj.exe\u2069"?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'No' }));

    await userEvent.dblClick(row(folder));
    const crumbs = () => [...screen.getByTestId('path-bar').querySelectorAll('bdi')].map((c) => c.textContent);
    await waitFor(() => expect(crumbs()).toEqual(['Bank[U+202E]txt.exe', 'Reports[U+202E]fdp']));
    shownBidiMarks();
  });

  describe('download', () => {
    /** The explorer (with its task panel) listing ROOT; `link` answers POST /api/cloud-manager/download-link. */
    const renderWithPanel = (link: (call: RecordedCall) => unknown) =>
      render(() => ({ items: ROOT, page_token: null }), { 'POST /api/cloud-manager/download-link': link });
    const downloadA = async () => {
      await waitFor(() => expect(names()).toHaveLength(4));
      await userEvent.click(
        screen.getAllByTestId('file-row').find((r) => r.getAttribute('data-name') === 'a.txt') as HTMLElement,
      );
      await userEvent.click(screen.getByRole('button', { name: 'Download' }));
    };
    /** The hidden frame the browser downloads in, once the link is there. */
    const downloadFrame = async () => {
      await waitFor(() => expect(document.querySelector('iframe')).not.toBeNull());
      return document.querySelector('iframe') as HTMLIFrameElement;
    };
    /** The download's row in the explorer's task panel. */
    const panelRow = () => screen.getByTestId('task-row');

    it('a download the server answers with 404 shows failed with the reason, not "Downloaded"', async () => {
      renderWithPanel(() => ({ url: '/api/cloud-manager/files?link=L1', expires_at: 0 }));
      await downloadA();
      const frame = await downloadFrame();
      expect(new URL(frame.src).searchParams.get('link')).toBe('L1');
      // The browser's navigation answered the error envelope (the file is gone).
      const doc = frame.contentDocument as Document;
      const root = doc.documentElement ?? doc.appendChild(doc.createElement('html'));
      root.appendChild(doc.createElement('body')).textContent = JSON.stringify({
        code: 404,
        msg: 'The path does not exist.',
        data: null,
      });
      frame.dispatchEvent(new Event('load'));
      await waitFor(() => expect(within(panelRow()).getByTestId('task-failed')).toHaveTextContent('Failed'));
      expect(within(panelRow()).getByTestId('task-error')).toHaveTextContent('The path does not exist.');
      expect(within(panelRow()).queryByText('Downloaded')).toBeNull();
      expect(await screen.findByText('Download failed: a.txt')).toBeInTheDocument();
    });

    it('a download whose link cannot be made (the file is gone) fails with the reason', async () => {
      renderWithPanel(() => new Fail(Code.NOT_FOUND, 'The path does not exist.', 404));
      await downloadA();
      await waitFor(() =>
        expect(within(panelRow()).getByTestId('task-error')).toHaveTextContent('The path does not exist.'),
      );
      expect(document.querySelector('iframe')).toBeNull();
    });

    it('a download the server begins sending shows "Downloaded"', async () => {
      renderWithPanel(() => ({ url: '/api/cloud-manager/files?link=L2', expires_at: 0 }));
      await downloadA();
      const frame = await downloadFrame();
      expect(within(panelRow()).queryByText('Downloaded')).toBeNull();
      document.cookie = `sf-dl-${new URL(frame.src).searchParams.get('notify')}=1; Path=/`;
      await waitFor(() => expect(within(panelRow()).getByText('Downloaded')).toBeInTheDocument());
      expect(within(panelRow()).queryByTestId('task-error')).toBeNull();
    });
  });
});
