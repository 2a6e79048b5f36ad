import { TaskState, isRunningState, type ServerTask } from '@skyferry/contract';
import { useEffect } from 'react';
import { i18n } from '../../i18n/index.ts';
import { selectLoggedIn, sessionStore } from '../session/store.ts';
import { desktopBridge, type SkyferryDesktopBridge } from '../shell/desktop.ts';
import { tasksApi } from './api.ts';

/** How often the desktop client's tray and notifications read the running list. */
export const DESKTOP_REPORT_MS = 10_000;

/** States a task is still on its way in (running, queued, waiting); the others are where it ended. */
const ON_ITS_WAY = new Set<number>([
  TaskState.scanning,
  TaskState.running,
  TaskState.waiting,
  TaskState.waitingNoCancel,
]);

/**
 * Desktop client: tells the tray which transfers run (with their progress) and raises a native
 * notification when one ends, whether or not the transmission list is open. Reads the running
 * list every DESKTOP_REPORT_MS while signed in; a task that left it is read once for its outcome.
 */
export function startDesktopReporter(
  bridge: Pick<SkyferryDesktopBridge, 'setRunningTransfers' | 'notifyTaskEnded'>,
  intervalMs = DESKTOP_REPORT_MS,
): () => void {
  let active = new Map<string, ServerTask>();
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const notifyEnded = async (task: ServerTask) => {
    const detail = await tasksApi.detail(task.id).catch(() => null);
    if (!detail || ON_ITS_WAY.has(detail.state) || detail.state === TaskState.pending) return;
    bridge.notifyTaskEnded?.({
      title: detail.task_name.slice(0, 200),
      body: i18n.t(`transmission:state.${detail.state}`),
    });
  };

  const tick = async () => {
    if (!selectLoggedIn(sessionStore.getState())) {
      active = new Map();
      bridge.setRunningTransfers?.([]);
    } else {
      const list = await tasksApi.list(0).catch(() => null);
      if (list && !stopped) {
        const now = new Map(list.items.filter((t) => ON_ITS_WAY.has(t.state)).map((t) => [t.id, t]));
        for (const [id, task] of active) if (!now.has(id)) void notifyEnded(task);
        active = now;
        bridge.setRunningTransfers?.(
          [...now.values()]
            .filter((t) => isRunningState(t.state))
            .map((t) => ({
              id: t.id,
              name: t.task_name,
              percent: t.state === TaskState.running ? Math.max(0, Math.min(100, t.progress.percentage)) : null,
            })),
        );
      }
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Mounted once by the app: runs the reporter in the desktop client only. */
export function DesktopTaskReporter() {
  useEffect(() => {
    const bridge = desktopBridge();
    if (!bridge?.setRunningTransfers) return;
    return startDesktopReporter(bridge);
  }, []);
  return null;
}
