import { isRunningState, toggleSchedule, TaskState, type ServerTask, type TaskAction } from '@skyferry/contract';
import { i18n } from '../../i18n/index.ts';
import { confirm } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { navigateTo } from '../session/navigation.ts';
import { selectVisibleClouds, sessionStore } from '../session/store.ts';
import { cloudHref } from '../shell/clouds.ts';
import { closeShellDialog } from '../shell/store.ts';
import { tasksApi } from './api.ts';
import { reportTaskError } from './errors.ts';
import { openDetails, patchTask, transmission, transmissionStore, type ListKind } from './store.ts';

const tr = () => i18n.getFixedT(null, 'transmission');

/** Where View goes: the target cloud's explorer (or photos view) at the task's target folder. */
export function targetHref(task: ServerTask, now = Date.now()): string | null {
  const clouds = selectVisibleClouds(sessionStore.getState());
  const index = clouds.findIndex((c) => c.id === task.to_cloud.cloud_id);
  const cloud = clouds[index];
  if (!cloud) return null;
  const href = cloudHref(cloud, index, now);
  return task.to_cloud.path && task.to_cloud.path !== '/'
    ? `${href}&path=${encodeURIComponent(task.to_cloud.path)}`
    : href;
}

/**
 * Runs one action of a task row as spec section 4 says: View opens the target cloud; Cancel and
 * Delete ask first ("Are you sure to cancel the task?", "Are you sure to delete the task?"); Retry,
 * Restart and Start now queue a run; the tick box flips the schedule; the detail icon opens the
 * Transfer Details dialog. Resolves once the lists are read again.
 */
export async function runTaskAction(action: TaskAction, task: ServerTask): Promise<void> {
  const t = tr();
  try {
    switch (action) {
      case 'view': {
        const href = targetHref(task);
        if (!href) {
          toast.warning(t('targetGone'));
          return;
        }
        closeShellDialog('transmissionOpen');
        navigateTo(href);
        return;
      }
      case 'details':
        openDetails(task.id);
        return;
      case 'cancel': {
        if ((await confirm({ message: t('confirmCancel') })) !== 'yes') return;
        await tasksApi.cancel(task.id);
        await transmission.refreshAll();
        return;
      }
      case 'delete': {
        if ((await confirm({ message: t('confirmDelete'), danger: true })) !== 'yes') return;
        await tasksApi.remove(task.id);
        await transmission.refreshAll();
        return;
      }
      case 'retry':
        await tasksApi.retry(task.id);
        transmission.watch(task.id);
        await transmission.refreshAll();
        return;
      case 'restart':
      case 'start_now':
        await tasksApi.run(task.id);
        transmission.watch(task.id);
        await transmission.refreshAll();
        return;
      case 'toggle_schedule': {
        const updated = await tasksApi.setSchedule(task.id, toggleSchedule(task.is_schedule));
        patchTask(task.id, updated);
        return;
      }
    }
  } catch (err) {
    await reportTaskError(err, task.to_cloud.cloud_id);
    await transmission.refreshAll();
  }
}

/** Whether a list holds tasks that have not finished (clear all then asks with the spec's words). */
export function hasUnfinished(list: readonly ServerTask[]): boolean {
  return list.some(
    (t) => isRunningState(t.state) || t.state === TaskState.waiting || t.state === TaskState.waitingNoCancel,
  );
}

/** Clear all: deletes every task of one list (every page), after a confirmation. */
export async function clearAll(kind: ListKind): Promise<void> {
  const t = tr();
  const { list } = transmissionStore.getState()[kind];
  if (list.length === 0) return;
  const message = hasUnfinished(list) ? t('confirmClearUnfinished') : t('confirmClearAll');
  if ((await confirm({ message, danger: true })) !== 'yes') return;
  try {
    // Page 1 again and again until the list is empty (tasks added meanwhile are cleared too, within reason).
    for (let round = 0; round < 50; round++) {
      const page = await tasksApi.list(kind === 'running' ? 0 : 1, 1);
      if (page.items.length === 0) break;
      await Promise.all(page.items.map((task) => tasksApi.remove(task.id)));
    }
  } catch (err) {
    await reportTaskError(err);
  }
  transmissionStore.setState((s) => ({ [kind]: { ...s[kind], page: 1 } }));
  await transmission.refreshAll();
}
