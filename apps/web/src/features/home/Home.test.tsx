import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, type CloudKind, type SystemCloudKind, systemCloudKind } from '@skyferry/contract';
import { authData, cloud, renderWithProviders } from '../../test/utils.tsx';
import { applyAuth } from '../session/actions.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { markCloudUsed } from '../shell/clouds.ts';
import { shellStore } from '../shell/store.ts';
import { Home } from './Home.tsx';

const kind = (name: CloudKind, available = true): SystemCloudKind =>
  systemCloudKind(name, available, available ? null : 'The operator has not configured a google OAuth client.');

const section = (name: string) => screen.getByRole('region', { name });

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  shellStore.setState({ connectOpen: false, connectKind: null });
  sessionStore.setState({
    systemClouds: [kind('google_drive', false), kind('webdav'), kind('sftp'), kind('local')],
    cloudsLoaded: true,
  });
});
afterEach(() => vi.unstubAllGlobals());

describe('home', () => {
  it('greets a signed-in user by name, a visitor with Hello', () => {
    applyAuth(authData());
    const { unmount } = renderWithProviders(<Home />);
    expect(screen.getByRole('heading', { level: 2 })).toHaveTextContent('Hello Ada');
    unmount();
    localStorage.clear();
    resetSessionStore();
    renderWithProviders(<Home />);
    expect(screen.getByRole('heading', { level: 2 })).toHaveTextContent(/^Hello$/);
  });

  it('lists the recently used clouds, newest first, among those still connected', async () => {
    sessionStore.setState({
      tempClouds: [cloud('a', { cloud_alias_name: 'Alpha' }), cloud('b', { cloud_alias_name: 'Bravo' })],
    });
    markCloudUsed('a', 1);
    markCloudUsed('gone', 2);
    markCloudUsed('b', 3);
    const { router } = renderWithProviders(<Home />, { path: '/manage' });
    const recent = section('Recently used');
    const names = within(recent)
      .getAllByRole('button')
      .map((b) => b.textContent);
    expect(names).toEqual([expect.stringContaining('Bravo'), expect.stringContaining('Alpha')]);
    // Opening one goes to the explorer with cloud_index and makes it the most recent.
    await userEvent.click(within(recent).getByText('Alpha'));
    expect(router.state.location.pathname).toBe('/manage/explorer');
    expect(new URLSearchParams(router.state.location.search).get('cloud_index')).toBe('0');
    expect(JSON.parse(localStorage.getItem('skyferry.recent_clouds') ?? '[]')[0].id).toBe('a');
  });

  it('says where recent clouds will appear before any was opened', () => {
    renderWithProviders(<Home />);
    expect(within(section('Recently used')).getByText('Cloud drives you open will be listed here.')).toBeVisible();
  });

  it('shows the drives in use with their count and space, and the kinds not used yet (unavailable last)', () => {
    sessionStore.setState({
      tempClouds: [
        cloud('a', { cloud_name: 'webdav', cloud_alias_name: 'NAS', space: 4 * 1024 ** 3, used_space: 1024 ** 3 }),
      ],
    });
    renderWithProviders(<Home />);
    const used = section('Cloud drives in use');
    expect(within(used).getByText(`1 / ${LIMITS.maxCloudDrives}`)).toBeInTheDocument();
    expect(within(used).getByText('NAS')).toBeInTheDocument();
    expect(within(used).getByText('1.00 GB of 4.00 GB used')).toBeInTheDocument();
    const unused = within(section('Not used yet'))
      .getAllByRole('button')
      .map((b) => [b.textContent, b.hasAttribute('disabled')]);
    expect(unused).toEqual([
      [expect.stringContaining('SFTP'), false],
      [expect.stringContaining('Local folder'), false],
      [expect.stringContaining('Google Drive'), true],
    ]);
  });

  it('Add cloud drive, and a kind not used yet, open the Connect cloud drive dialog (on that kind)', async () => {
    renderWithProviders(<Home />);
    expect(within(section('Cloud drives in use')).getByText('You have not connected a cloud drive yet.')).toBeVisible();
    await userEvent.click(screen.getAllByRole('button', { name: 'Add cloud drive' })[0] as HTMLElement);
    expect(shellStore.getState()).toMatchObject({ connectOpen: true, connectKind: null });
    shellStore.setState({ connectOpen: false });
    await userEvent.click(within(section('Not used yet')).getByText('SFTP'));
    expect(shellStore.getState()).toMatchObject({ connectOpen: true, connectKind: 'sftp' });
  });

  it(`warns from ${LIMITS.cloudWarningFrom} clouds and says when the maximum is reached`, () => {
    sessionStore.setState({
      tempClouds: Array.from({ length: LIMITS.cloudWarningFrom }, (_, i) => cloud(`c${i}`)),
    });
    const { unmount } = renderWithProviders(<Home />);
    expect(
      screen.getByText(
        `You have connected ${LIMITS.cloudWarningFrom} of at most ${LIMITS.maxCloudDrives} cloud drives.`,
      ),
    ).toBeInTheDocument();
    unmount();
    sessionStore.setState({ tempClouds: Array.from({ length: LIMITS.maxCloudDrives }, (_, i) => cloud(`c${i}`)) });
    renderWithProviders(<Home />);
    expect(
      screen.getByText("You've reached the maximum number of cloud drives, please arrange them in Management."),
    ).toBeInTheDocument();
  });
});
