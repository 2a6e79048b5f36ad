import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CloudKind, type SystemCloudKind, systemCloudKind } from '@skyferry/contract';
import { SPOOFED, cloud, mockApi, renderWithProviders, shownBidiMarks, type RecordedCall } from '../../test/utils.tsx';
import { hideTips, resetGuide } from '../guide/store.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import type { Cloud } from '../session/types.ts';
import { resetRunner } from '../task-panel/runner.ts';
import { ManagePage } from './ManagePage.tsx';

const GB = 1024 ** 3;

const kind = (name: CloudKind): SystemCloudKind => systemCloudKind(name);

/** The server's view of each cloud's space (what POST /api/cloud-manager/info answers). */
let space: Record<string, { space_amount: number; space_used: number; reported?: boolean }> = {};

function render(clouds: Cloud[], extra: Record<string, (c: RecordedCall) => unknown> = {}) {
  sessionStore.setState({ tempClouds: clouds, cloudsLoaded: true, systemClouds: [kind('webdav'), kind('local')] });
  const api = mockApi({
    'POST /api/cloud-manager/info': (c) => space[(c.body as { cloud_id: string }).cloud_id],
    ...extra,
  });
  renderWithProviders(
    <>
      <ManagePage />
      <MessageHost />
    </>,
    { path: '/manage' },
  );
  return api;
}

const card = (id: string) =>
  screen.getAllByTestId('manage-cloud').find((c) => c.getAttribute('data-cloud-id') === id) as HTMLElement;
const cardIds = () => screen.queryAllByTestId('manage-cloud').map((c) => c.getAttribute('data-cloud-id'));

beforeEach(() => {
  localStorage.clear();
  resetGuide();
  hideTips();
  resetSessionStore();
  messagesStore.setState({ dialogs: [], loading: 0 });
  space = {};
});
afterEach(() => {
  resetRunner();
  vi.unstubAllGlobals();
});

describe('/manage', () => {
  it('colours each usage bar by the thresholds and shows the storage bar level (enough, narrow, hard)', async () => {
    const clouds = [
      cloud('low', { space: 100 * GB, used_space: 40 * GB }),
      cloud('mid', { space: 100 * GB, used_space: 60 * GB }),
      cloud('high', { space: 100 * GB, used_space: 80 * GB }),
      cloud('full', { space: 100 * GB, used_space: 95 * GB }),
    ];
    for (const c of clouds) space[c.id] = { space_amount: c.space, space_used: c.used_space };
    render(clouds);
    expect(cardIds()).toEqual(['low', 'mid', 'high', 'full']);
    const bar = (id: string) => within(card(id)).getByTestId('usage-bar').getAttribute('data-colour');
    const level = (id: string) => within(card(id)).getByTestId('storage-level');
    expect(['low', 'mid', 'high', 'full'].map(bar)).toEqual(['normal', 'warn', 'danger', 'danger']);
    expect(['low', 'mid', 'high', 'full'].map((id) => level(id).getAttribute('data-level'))).toEqual([
      'enough',
      'enough',
      'narrow',
      'hard',
    ]);
    expect(level('full')).toHaveTextContent('Almost full');
    expect(within(card('high')).getByText('80.00 GB of 100.00 GB used')).toBeInTheDocument();
  });

  it('asks each service for its space, 1 to 2 s apart, and shows it', async () => {
    space = { a: { space_amount: 10 * GB, space_used: 5 * GB } };
    const api = render([cloud('a', { space: 0, used_space: 0 })]);
    expect(within(card('a')).getByText('Space not known yet')).toBeInTheDocument();
    expect(api.find('POST /api/cloud-manager/info')).toHaveLength(0);
    await waitFor(() => expect(within(card('a')).getByText('5.00 GB of 10.00 GB used')).toBeInTheDocument(), {
      timeout: 4_000,
    });
    // The page's own refresh is no use of the cloud (only the user's actions count at sign-in).
    expect(api.find('POST /api/cloud-manager/info')[0]?.body).toEqual({ cloud_id: 'a', background: true });
  });

  it('refreshes every cloud’s space, not only the first (CONST-38)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const ids = ['a', 'b', 'c', 'd'];
      for (const [i, id] of ids.entries()) space[id] = { space_amount: 10 * GB, space_used: (i + 1) * GB };
      const api = render(ids.map((id) => cloud(id, { space: 0, used_space: 0 })));
      // Four clouds, at most 2 s each.
      for (let s = 0; s < 8; s++) await vi.advanceTimersByTimeAsync(1_000);
      expect(api.find('POST /api/cloud-manager/info').map((c) => (c.body as { cloud_id: string }).cloud_id)).toEqual(
        ids,
      );
      for (const [i, id] of ids.entries()) {
        expect(within(card(id)).getByText(`${i + 1}.00 GB of 10.00 GB used`)).toBeInTheDocument();
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('says the space is not reported when the service answers that it reports none, not "not known yet"', async () => {
    space = { a: { space_amount: 0, space_used: 0, reported: false } };
    const api = render([cloud('a', { space: 0, used_space: 0 })]);
    expect(within(card('a')).getByText('Space not known yet')).toBeInTheDocument();
    await waitFor(() => expect(api.find('POST /api/cloud-manager/info')).toHaveLength(1), { timeout: 4_000 });
    await waitFor(() =>
      expect(within(card('a')).getByText('This kind of cloud drive does not report its space')).toBeInTheDocument(),
    );
    expect(within(card('a')).queryByText('Space not known yet')).not.toBeInTheDocument();
  });

  it('renames a cloud’s alias with PUT /api/clouds/{id}', async () => {
    const api = render([cloud('a', { cloud_alias_name: 'Old' })], {
      'PUT /api/clouds/a': (c) => cloud('a', { cloud_alias_name: (c.body as { alias: string }).alias }),
    });
    await userEvent.click(within(card('a')).getByRole('button', { name: 'Rename' }));
    const input = within(card('a')).getByRole('textbox', { name: 'Name' });
    await userEvent.clear(input);
    await userEvent.type(input, '  Work files {Enter}');
    await waitFor(() => expect(api.find('PUT /api/clouds/a')).toHaveLength(1));
    expect(api.find('PUT /api/clouds/a')[0]?.body).toEqual({ alias: 'Work files' });
    await waitFor(() => expect(within(card('a')).getByText('Work files')).toBeInTheDocument());
    expect(sessionStore.getState().tempClouds[0]?.cloud_alias_name).toBe('Work files');
  });

  it('removes a cloud only after confirmation, then reloads the list (the sidebar follows the store)', async () => {
    const api = render([cloud('a', { cloud_alias_name: 'Alpha' }), cloud('b', { cloud_alias_name: 'Bravo' })], {
      'DELETE /api/clouds/a': () => null,
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [cloud('b', { cloud_alias_name: 'Bravo' })] }),
    });
    await userEvent.click(within(card('a')).getByRole('button', { name: 'Remove' }));
    let dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Remove "Alpha" from Skyferry? Its files stay in the cloud drive.');
    await userEvent.click(within(dialog).getByRole('button', { name: 'No' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(api.find('DELETE /api/clouds/a')).toHaveLength(0);
    await userEvent.click(within(card('a')).getByRole('button', { name: 'Remove' }));
    dialog = await screen.findByRole('dialog');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(cardIds()).toEqual(['b']));
    expect(api.find('DELETE /api/clouds/a')).toHaveLength(1);
    expect(sessionStore.getState().tempClouds.map((c) => c.id)).toEqual(['b']);
  });

  it('a cloud name with bidi controls shows them as marks, on its card, in the remove prompt and in the toast', async () => {
    render([cloud('a', { cloud_alias_name: SPOOFED.cloud, cloud_account: 'ann\u202E@dav.example' })], {
      'DELETE /api/clouds/a': () => null,
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }),
    });
    expect([...card('a').querySelectorAll('bdi')].map((b) => b.textContent)).toEqual([
      'Bank[U+202E]txt.exe',
      'ann[U+202E]@dav.example',
    ]);
    // The card, and the cloud's entry in the page's list of clouds.
    expect(shownBidiMarks()).toEqual(['[U+202E]', '[U+202E]', '[U+202E]', '[U+202E]']);
    await userEvent.click(within(card('a')).getByRole('button', { name: 'Remove' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Remove "\u2068Bank[U+202E]txt.exe\u2069" from Skyferry?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Yes' }));
    expect(await screen.findByText(/Bank\[U\+202E\]txt\.exe/)).toBeInTheDocument();
    shownBidiMarks();
  });

  it('moves a cloud down and saves the order with PUT /api/clouds/sort', async () => {
    const api = render([cloud('a'), cloud('b'), cloud('c')], { 'PUT /api/clouds/sort': () => null });
    expect(within(card('a')).getByRole('button', { name: 'Move up' })).toBeDisabled();
    await userEvent.click(within(card('a')).getByRole('button', { name: 'Move down' }));
    await waitFor(() => expect(cardIds()).toEqual(['b', 'a', 'c']));
    expect(api.find('PUT /api/clouds/sort')[0]?.body).toEqual({ sort_val: JSON.stringify(['b', 'a', 'c']) });
    expect(within(card('c')).getByRole('button', { name: 'Move down' })).toBeDisabled();
  });

  it('an expired cloud says so, and Reauthorize opens the connect dialog on its kind', async () => {
    render([cloud('a', { status: 'expired', cloud_alias_name: 'NAS' })]);
    expect(within(card('a')).getByText('Authorization expired')).toBeInTheDocument();
    expect(within(card('a')).getByRole('button', { name: 'Refresh space' })).toBeDisabled();
    await userEvent.click(within(card('a')).getByRole('button', { name: 'Reauthorize' }));
    const dialog = await screen.findByRole('dialog', { name: 'Reauthorize cloud drive' });
    expect(within(dialog).getByRole('textbox', { name: 'Server URL' })).toBeInTheDocument();
  });
});
