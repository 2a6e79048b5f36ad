import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, type FileItem } from '@skyferry/contract';
import { Fail, authData, cloud, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
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

const photo = (name: string, type: 0 | 1 = 1): FileItem => ({
  id: `/${name}`,
  name,
  path: `/${name}`,
  type,
  size: type === 1 ? 1000 : 0,
  modified: 0,
  mime_type: null,
});

describe('the photo grid and albums', () => {
  beforeEach(() => {
    // jsdom has neither: every tile is "in view" at once, and previews become object URLs.
    vi.stubGlobal(
      'IntersectionObserver',
      class {
        private readonly callback: (entries: Array<{ isIntersecting: boolean }>) => void;
        constructor(callback: (entries: Array<{ isIntersecting: boolean }>) => void) {
          this.callback = callback;
        }
        observe() {
          this.callback([{ isIntersecting: true }]);
        }
        disconnect() {}
      },
    );
    let n = 0;
    vi.spyOn(URL, 'createObjectURL').mockImplementation(() => `blob:preview-${(n += 1)}`);
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => undefined);
  });
  afterEach(() => vi.restoreAllMocks());

  const listing = [photo('beach.jpg'), photo('notes.txt'), photo('Trips', 0), photo('dog.png')];

  it('shows the folder’s pictures as tiles whose previews come from the server, and its sub-folders', async () => {
    const api = mockApi({
      'POST /api/cloud-manager/list': () => ({ items: listing, page_token: null }),
      'POST /api/cloud-manager/albums/list': () => ({
        albums: [{ id: 'al1', title: 'Summer', count: 3, cover_path: null }],
      }),
      'GET /api/cloud-manager/thumbnail': () => null,
    });
    renderWithProviders(<PhotosPage />, { path: '/manage/photos?cloud_index=0' });
    await waitFor(() => expect(screen.getAllByTestId('photo-tile')).toHaveLength(2));
    expect(screen.getAllByTestId('photo-tile').map((t) => t.getAttribute('aria-label'))).toEqual([
      'beach.jpg',
      'dog.png',
    ]);
    await waitFor(() => expect(screen.getByTestId('photo-grid').querySelectorAll('img')).toHaveLength(2));
    const previews = api.find('GET /api/cloud-manager/thumbnail');
    expect(previews.map((c) => [c.query.get('cloud_id'), c.query.get('path'), c.query.get('size')])).toEqual([
      ['gp', '/beach.jpg', '256'],
      ['gp', '/dog.png', '256'],
    ]);
    expect(screen.getByRole('button', { name: 'Trips' })).toBeInTheDocument();
    expect(within(screen.getByTestId('albums')).getByText('Summer (3)')).toBeInTheDocument();
  });

  it('adds the selected photos to a new album: creates it, then adds them', async () => {
    const api = mockApi({
      'POST /api/cloud-manager/list': () => ({ items: listing, page_token: null }),
      'POST /api/cloud-manager/albums/list': () => ({
        albums: [{ id: 'al1', title: 'Summer', count: 3, cover_path: null }],
      }),
      'GET /api/cloud-manager/thumbnail': () => null,
      'POST /api/cloud-manager/albums/create': () => ({ id: 'al2', title: 'Dogs', count: 0, cover_path: null }),
      'POST /api/cloud-manager/albums/add': () => ({ added: 1 }),
    });
    renderWithProviders(<PhotosPage />, { path: '/manage/photos?cloud_index=0' });
    const add = screen.getByTestId('add-to-album');
    await waitFor(() => expect(screen.getAllByTestId('photo-tile')).toHaveLength(2));
    expect(add).toBeDisabled();
    const dog = screen.getByRole('button', { name: 'dog.png' });
    await userEvent.click(dog);
    expect(dog).toHaveAttribute('aria-pressed', 'true');
    await waitFor(() => expect(add).toBeEnabled());
    await userEvent.click(add);
    const dialog = await screen.findByRole('dialog', { name: 'Add to album' });
    expect(within(dialog).getByRole('radio', { name: 'Summer' })).toBeChecked();
    await userEvent.click(within(dialog).getByRole('radio', { name: 'New album' }));
    const confirm = within(dialog).getByRole('button', { name: 'Add' });
    expect(confirm).toBeDisabled();
    await userEvent.type(within(dialog).getByRole('textbox', { name: 'Album title' }), 'Dogs');
    await userEvent.click(confirm);
    await waitFor(() => expect(api.find('POST /api/cloud-manager/albums/add')).toHaveLength(1));
    expect(api.find('POST /api/cloud-manager/albums/create')[0]?.body).toEqual({ cloud_id: 'gp', title: 'Dogs' });
    expect(api.find('POST /api/cloud-manager/albums/add')[0]?.body).toEqual({
      cloud_id: 'gp',
      album_id: 'al2',
      files: ['/dog.png'],
    });
    expect(await screen.findByText('Added 1 photo to the album.')).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'dog.png' })).toHaveAttribute('aria-pressed', 'false'),
    );
  });

  it('says when the cloud has no albums (403003) and keeps "add to album" off', async () => {
    mockApi({
      'POST /api/cloud-manager/list': () => ({ items: listing, page_token: null }),
      'POST /api/cloud-manager/albums/list': () => new Fail(Code.FORBIDDEN, 'forbidden', 403),
      'GET /api/cloud-manager/thumbnail': () => null,
    });
    renderWithProviders(<PhotosPage />, { path: '/manage/photos?cloud_index=1' });
    expect(await screen.findByTestId('albums-unavailable')).toHaveTextContent(
      'Albums are not available for this cloud drive.',
    );
    await userEvent.click(await screen.findByRole('button', { name: 'dog.png' }));
    expect(screen.getByTestId('add-to-album')).toBeDisabled();
  });
});
