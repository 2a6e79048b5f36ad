import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { Fail, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { OperatorApps } from './OperatorApps.tsx';

describe("the operator's external apps", () => {
  it('registers an app by its address and file types, lists it, and shows the server’s refusal', async () => {
    const registered: unknown[] = [];
    const api = mockApi({
      'GET /api/operator/apps': () => ({
        items: registered.length
          ? [
              {
                app_id: 100,
                name: 'Sketch pad',
                origin: 'https://sketch.example.com',
                functions: [{ extensions: ['png'] }],
              },
            ]
          : [],
      }),
      'POST /api/operator/apps': (call) => {
        const body = call.body as { url: string };
        if (!body.url.startsWith('https://sketch'))
          return new Fail(400, 'Every function must be on the app’s own address.');
        registered.push(body);
        return { app_id: 100 };
      },
    });
    renderWithProviders(<OperatorApps />);
    await screen.findByText('No app has been added.');
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Name'), 'Sketch pad');
    await user.type(screen.getByLabelText('Address'), 'https://sketch.example.com/app');
    await user.type(screen.getByLabelText('File types it opens'), '.PNG, jpg');
    await user.click(screen.getByRole('button', { name: 'Add app' }));
    await screen.findByText('https://sketch.example.com');
    expect(api.find('POST /api/operator/apps')[0]?.body).toEqual({
      name: 'Sketch pad',
      url: 'https://sketch.example.com/app',
      is_mandatory_login: false,
      functions: [{ name: 'Sketch pad', action: 'view', extensions: ['png', 'jpg'] }],
    });
    await user.type(screen.getByLabelText('Name'), 'Other');
    await user.type(screen.getByLabelText('Address'), 'https://elsewhere.example.com');
    await user.click(screen.getByRole('button', { name: 'Add app' }));
    await waitFor(() => expect(screen.getByRole('alert')).toHaveTextContent('own address'));
  });
});
