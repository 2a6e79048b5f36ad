import { screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authData, cloud, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { applyAuth } from '../session/actions.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { PhotosPage } from './PhotosPage.tsx';

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  applyAuth(authData());
  sessionStore.setState({
    init: initData(),
    clouds: [
      cloud('gp', { cloud_name: 'google_photos', cloud_alias_name: 'Pics', photos: true }),
      cloud('dav', { cloud_alias_name: 'Nas' }),
    ],
    cloudsLoaded: true,
  });
});
afterEach(() => vi.unstubAllGlobals());

const serve = () =>
  mockApi({
    'POST /api/cloud-manager/list': () => ({ items: [], page_token: null }),
    'POST /api/cloud-manager/albums/list': () => ({ albums: [] }),
  });

describe('the photos view', () => {
  it('says plainly that Google Photos shows Skyferry only what Skyferry uploaded', async () => {
    const api = serve();
    renderWithProviders(<PhotosPage />, { path: '/manage/photos?cloud_index=0' });
    const notice = await screen.findByTestId('photos-app-only');
    expect(notice).toHaveTextContent('Only what Skyferry uploaded');
    expect(notice).toHaveTextContent(
      'Since March 31, 2025, Google Photos shows apps only the photos and videos they uploaded themselves.',
    );
    expect(notice).toHaveTextContent('not the rest of your library');
    // The empty grid sits under the notice that explains it.
    expect(await screen.findByText('No photos in this folder.')).toBeInTheDocument();
    await waitFor(() => expect(api.find('POST /api/cloud-manager/list')).toHaveLength(1));
  });

  it('shows no such notice for a cloud of another kind', async () => {
    serve();
    renderWithProviders(<PhotosPage />, { path: '/manage/photos?cloud_index=1' });
    expect(await screen.findByText('No photos in this folder.')).toBeInTheDocument();
    expect(screen.queryByTestId('photos-app-only')).not.toBeInTheDocument();
  });
});
