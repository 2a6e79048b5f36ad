import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalTaskStatus } from '@skyferry/contract';
import { SPOOFED, cloud, renderWithProviders, shownBidiMarks } from '../../test/utils.tsx';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { resetRunner } from './runner.ts';
import { addTasks, taskPanelStore, type LocalTask } from './store.ts';
import { TaskPanel } from './TaskPanel.tsx';

const task = (id: string, overrides: Partial<LocalTask> = {}): LocalTask => ({
  id,
  name: `${id}.txt`,
  size: 1000,
  original_size: 1000,
  type: 0,
  status: LocalTaskStatus.completed,
  progress: 100,
  parent: '/docs',
  cloud_id: 'c2',
  path: `/docs/${id}.txt`,
  start_time: 0,
  error: '',
  progress_text: '',
  downloadId: '',
  directory: '',
  is_multi: false,
  real_index: 0,
  task_object: { kind: 'upload', cloud_id: 'c2', folder: '/docs', relative_path: `${id}.txt` },
  object: { name: `${id}.txt`, size: 1000, type: 'text/plain', modified: 0 },
  ...overrides,
});

function render() {
  return renderWithProviders(
    <>
      <TaskPanel />
      <MessageHost />
    </>,
    { path: '/manage' },
  );
}

const rows = () => screen.queryAllByTestId('task-row');

beforeEach(() => {
  resetSessionStore();
  messagesStore.setState({ dialogs: [], loading: 0 });
  sessionStore.setState({ tempClouds: [cloud('c1'), cloud('c2')], cloudsLoaded: true });
});
afterEach(() => {
  resetRunner();
  vi.unstubAllGlobals();
});

describe('task panel', () => {
  it('is hidden without tasks; shows the count in the title, one row per task, and collapses', async () => {
    render();
    expect(screen.queryByTestId('task-panel')).not.toBeInTheDocument();
    addTasks([task('a'), task('b', { type: 1 }), task('c', { status: LocalTaskStatus.failed })]);
    expect(await screen.findByTestId('task-panel-title')).toHaveTextContent('Tasks (3)');
    expect(rows()).toHaveLength(3);
    const toggle = screen.getByRole('button', { name: 'Collapse the task list' });
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await userEvent.click(toggle);
    expect(rows()).toHaveLength(0);
    expect(screen.getByTestId('task-panel-title')).toHaveTextContent('Tasks (3)');
    await userEvent.click(screen.getByRole('button', { name: 'Expand the task list' }));
    expect(rows()).toHaveLength(3);
  });

  it('shows each status: progress with its percentage, done, failed with retry (-1), failed (-2)', async () => {
    render();
    addTasks([
      task('run', { status: LocalTaskStatus.progressing, progress: 42.7 }),
      task('done'),
      task('retry', { status: LocalTaskStatus.failedRetry, error: 'Network Error' }),
      task('dead', { status: LocalTaskStatus.failed, type: 1 }),
    ]);
    const row = (name: string) =>
      rows().find((r) => within(r).getByTestId('task-name').textContent === `${name}.txt`) as HTMLElement;
    await waitFor(() => expect(rows()).toHaveLength(4));
    expect(within(row('run')).getByText('42%')).toBeInTheDocument();
    expect(within(row('run')).getByRole('progressbar', { name: '42% done' })).toBeInTheDocument();
    expect(within(row('done')).getByText('Uploaded')).toBeInTheDocument();
    expect(within(row('retry')).getByText('Failed')).toBeInTheDocument();
    expect(within(row('retry')).getByRole('button', { name: 'Retry' })).toBeInTheDocument();
    expect(within(row('dead')).getByText('Failed')).toBeInTheDocument();
    expect(within(row('dead')).queryByRole('button', { name: 'Retry' })).not.toBeInTheDocument();
  });

  it('shortens a long name to the first 7 characters, "..." and the last 6, keeping the whole name as its title', async () => {
    render();
    addTasks([task('x', { name: 'holiday-pictures-2024-final-version.zip' })]);
    const name = await screen.findByTestId('task-name');
    expect(name).toHaveTextContent('holiday...on.zip');
    expect(name).toHaveAttribute('title', 'holiday-pictures-2024-final-version.zip');
  });

  it('an upload named with a bidi control shows it as a mark, isolated, in the row and its title', async () => {
    render();
    addTasks([task('x', { name: SPOOFED.file })]);
    const name = await screen.findByTestId('task-name');
    expect(name.querySelector('bdi')?.textContent).toBe('invoice[U+202E]gpj.exe');
    expect(name).toHaveAttribute('title', '\u2068invoice[U+202E]gpj.exe\u2069');
    expect(shownBidiMarks()).toEqual(['[U+202E]']);
  });

  it('deletes one task', async () => {
    render();
    addTasks([task('a'), task('b')]);
    await waitFor(() => expect(rows()).toHaveLength(2));
    await userEvent.click(within(rows()[0] as HTMLElement).getByRole('button', { name: 'Delete task' }));
    expect(rows()).toHaveLength(1);
    expect(screen.getByTestId('task-panel-title')).toHaveTextContent('Tasks (1)');
  });

  it('clear all removes every task at once when none runs, and hides the panel', async () => {
    render();
    addTasks([task('a'), task('b', { status: LocalTaskStatus.failedRetry })]);
    await userEvent.click(await screen.findByRole('button', { name: 'Clear all' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(screen.queryByTestId('task-panel')).not.toBeInTheDocument();
    expect(taskPanelStore.getState().tasks).toEqual([]);
  });

  it('clear all asks first while a task runs: No keeps them, Yes clears', async () => {
    render();
    addTasks([task('a'), task('b', { status: LocalTaskStatus.progressing, progress: 5 })]);
    await userEvent.click(await screen.findByRole('button', { name: 'Clear all' }));
    let dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent(
      'Some tasks have not finished yet. Are you sure you want to clear the current tasks?',
    );
    await userEvent.click(within(dialog).getByRole('button', { name: 'No' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(rows()).toHaveLength(2);
    await userEvent.click(screen.getByRole('button', { name: 'Clear all' }));
    dialog = await screen.findByRole('dialog');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(screen.queryByTestId('task-panel')).not.toBeInTheDocument());
  });

  it('opens the target folder: the task’s cloud in the explorer, at its folder', async () => {
    const { router } = render();
    addTasks([task('a', { cloud_id: 'c2', parent: '/docs/2024' })]);
    await userEvent.click(await screen.findByRole('button', { name: 'Open target folder' }));
    const { pathname, search } = router.state.location;
    expect(pathname).toBe('/manage/explorer');
    const q = new URLSearchParams(search);
    expect(q.get('cloud_index')).toBe('1');
    expect(q.get('is_open')).toBe('1');
    expect(Number(q.get('_'))).toBeGreaterThan(0);
    expect(q.get('path')).toBe('/docs/2024');
  });

  it('offers no target folder for a cloud that is gone', async () => {
    render();
    addTasks([task('a', { cloud_id: 'gone' })]);
    await screen.findByTestId('task-row');
    expect(screen.queryByRole('button', { name: 'Open target folder' })).not.toBeInTheDocument();
  });
});
