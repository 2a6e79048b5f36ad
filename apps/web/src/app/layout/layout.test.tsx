import { screen } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { resetSessionStore, sessionStore } from '../../features/session/store.ts';
import { initData, renderWithProviders } from '../../test/utils.tsx';
import { AppLayout } from './AppLayout.tsx';

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData(), started: true, cloudsLoaded: true });
});

function Broken(): never {
  throw new Error('a screen that breaks');
}

describe('the layout', () => {
  it('keeps its header and menu when a screen fails to render, and says so in the screen’s place', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const children = [{ path: '/transfer', element: <Broken />, handle: { titleKey: 'page.transfer' } }];
    renderWithProviders(<p>root</p>, {
      path: '/transfer',
      routes: [{ element: <AppLayout routes={children} />, children }],
    });
    expect(await screen.findByTestId('render-error')).toHaveTextContent('Something went wrong');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Transfer' })).toBeInTheDocument();
    expect(document.title).toBe('Transfer · Skyferry');
  });
});
