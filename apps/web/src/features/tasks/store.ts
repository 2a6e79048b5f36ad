import { Code, INTERVALS, PAGE_SIZES, TaskState, isRunningState, type ServerTask } from '@skyferry/contract';
import { ApiRequestError } from '../../api/client.ts';
import { i18n } from '../../i18n/index.ts';
import { createStore, useStore } from '../../lib/store.ts';
import { toast } from '../messages/toast.ts';
import { onSessionEvent } from '../session/events.ts';
import { tasksApi } from './api.ts';
import { offerDataPackage } from './errors.ts';
import { failedLine } from './format.ts';

/** One of the two task lists (spec section 3: list, page, page_size, total). */
export interface TaskListState {
  list: ServerTask[];
  page: number;
  page_size: number;
  total: number;
  loaded: boolean;
}

export type ListKind = 'running' | 'completed';

export interface TransmissionState {
  running: TaskListState;
  completed: TaskListState;
  /** The last list load's failure, shown above the lists. */
  error: string | null;
  /** The task whose Transfer Details dialog is open. */
  detailsId: string | null;
}

const emptyList = (): TaskListState => ({ list: [], page: 1, page_size: PAGE_SIZES.tasks, total: 0, loaded: false });

export const transmissionStore = createStore<TransmissionState>({
  running: emptyList(),
  completed: emptyList(),
  error: null,
  detailsId: null,
});

export function useTransmission<S>(selector: (s: TransmissionState) => S): S {
  return useStore(transmissionStore, selector);
}

export function resetTransmission(): void {
  transmissionStore.setState({ running: emptyList(), completed: emptyList(), error: null, detailsId: null });
}

export function openDetails(taskId: string | null): void {
  transmissionStore.setState({ detailsId: taskId });
}

/** A task's place in the lists, patched in place (a poll's answer, a schedule toggle). */
export function patchTask(id: string, patch: Partial<ServerTask>): void {
  transmissionStore.setState((s) => {
    const apply = (l: TaskListState): TaskListState =>
      l.list.some((t) => t.id === id) ? { ...l, list: l.list.map((t) => (t.id === id ? { ...t, ...patch } : t)) } : l;
    return { running: apply(s.running), completed: apply(s.completed) };
  });
}

/** The wait before a running task's next progress poll: 2 to 3 s (spec section 7). */
export function progressPollDelay(random: () => number = Math.random): number {
  const { progressPollMin: min, progressPollMax: max } = INTERVALS;
  return min + Math.floor(random() * (max - min + 1));
}

/**
 * Keeps the transmission lists fresh while the dialog is open (spec section 7): the running list
 * every 5 s, each running task's progress every 2 to 3 s, pages of 100. A task whose poll answers
 * a state other than 1 or 2 (or 404) stops being polled, and both lists are read again.
 */
export class TransmissionPolling {
  private listTimer: ReturnType<typeof setInterval> | null = null;
  private readonly taskTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly seq: Record<ListKind, number> = { running: 0, completed: 0 };
  /**
   * Tasks a read of the running list showed there, kept until a later read no longer does (then
   * the completed list is read again). Superseded reads count too: a task that ran only between
   * them would otherwise be in neither list.
   */
  private readonly seenRunning = new Set<string>();
  /** Tasks seen running that have left the running states since: the next completed list says how they ended. */
  private readonly ended = new Set<string>();
  private active = false;
  private readonly random: () => number;

  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  get isActive(): boolean {
    return this.active;
  }

  /**
   * Watches a task the user just started (a run queued from the list or the Transfer screen): a
   * run that ends before any read of the running list shows it still gets its notice.
   */
  watch(id: string): void {
    this.seenRunning.add(id);
  }

  /** Task ids being polled now (for tests and the dialog). */
  polled(): string[] {
    return [...this.taskTimers.keys()];
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    void this.refresh('running');
    void this.refresh('completed');
    this.listTimer = setInterval(() => void this.refresh('running'), INTERVALS.runningListRefresh);
  }

  stop(): void {
    this.active = false;
    if (this.listTimer !== null) clearInterval(this.listTimer);
    this.listTimer = null;
    for (const timer of this.taskTimers.values()) clearTimeout(timer);
    this.taskTimers.clear();
    this.seenRunning.clear();
    this.ended.clear();
  }

  /** Reads one list's current page again; the running list also starts or stops task polls. */
  async refresh(kind: ListKind, options: { completedToo?: boolean } = {}): Promise<void> {
    const mine = ++this.seq[kind];
    const current = transmissionStore.getState()[kind];
    try {
      const data = await tasksApi.list(kind === 'running' ? 0 : 1, current.page, current.page_size);
      if (kind === 'running' && this.active) for (const t of data.items) this.seenRunning.add(t.id);
      if (mine !== this.seq[kind]) return;
      const total = data.total;
      // A page emptied by deletions falls back to the last page that has tasks.
      const lastPage = Math.max(1, Math.ceil(total / current.page_size));
      if (data.items.length === 0 && current.page > lastPage) {
        transmissionStore.setState((s) => ({ [kind]: { ...s[kind], page: lastPage } }));
        return this.refresh(kind, options);
      }
      transmissionStore.setState((s) => ({
        [kind]: { ...s[kind], list: data.items, total, loaded: true },
        error: null,
      }));
      if (kind === 'completed') this.noticeFailures(data.items);
      if (kind === 'running') {
        this.track(data.items);
        // A task that left the running list (finished, canceled after stopping) shows in the completed one now.
        const now = new Set(data.items.map((t) => t.id));
        const gone = [...this.seenRunning].filter((id) => !now.has(id));
        for (const id of gone) {
          this.seenRunning.delete(id);
          this.ended.add(id);
        }
        if (this.active && options.completedToo !== false && gone.length > 0) void this.refresh('completed');
      }
    } catch (err) {
      if (mine !== this.seq[kind]) return;
      transmissionStore.setState({ error: err instanceof Error ? err.message : String(err) });
    }
  }

  async setPage(kind: ListKind, page: number): Promise<void> {
    transmissionStore.setState((s) => ({ [kind]: { ...s[kind], page } }));
    await this.refresh(kind);
  }

  /**
   * Both lists again (after an action moved a task between them): the running list first, so the
   * completed list read after it holds every task that read no longer shows.
   */
  async refreshAll(): Promise<void> {
    await this.refresh('running', { completedToo: false });
    await this.refresh('completed');
  }

  /**
   * For each watched task that has just ended: "Migration Failed" / "Sync Failed" (MSG-19, MSG-20)
   * for state 3, "Insufficient transfer traffic" with the offer of a data package for state 10 (MSG-08).
   */
  private noticeFailures(list: readonly ServerTask[]): void {
    for (const task of list) {
      if (!this.ended.delete(task.id)) continue;
      if (task.state === TaskState.failed) toast.error(`${failedLine(task, i18n.t)} · ${task.task_name}`);
      if (task.state === TaskState.notEnoughTraffic) void offerDataPackage(task);
    }
  }

  private track(list: readonly ServerTask[]): void {
    if (!this.active) return;
    const running = new Set(list.filter((t) => isRunningState(t.state)).map((t) => t.id));
    for (const [id, timer] of this.taskTimers) {
      if (running.has(id)) continue;
      clearTimeout(timer);
      this.taskTimers.delete(id);
    }
    for (const id of running) if (!this.taskTimers.has(id)) this.schedule(id);
  }

  private schedule(id: string): void {
    if (!this.active) return;
    this.taskTimers.set(
      id,
      setTimeout(() => void this.poll(id), progressPollDelay(this.random)),
    );
  }

  private async poll(id: string): Promise<void> {
    if (!this.active || !this.taskTimers.has(id)) return;
    try {
      const p = await tasksApi.poll(id);
      if (!this.active || !this.taskTimers.has(id)) return;
      patchTask(id, {
        state: p.status,
        progress: p.progress,
        total_counts: p.total_counts,
        finished_counts: p.finished_counts,
      });
      if (isRunningState(p.status)) {
        this.schedule(id);
        return;
      }
    } catch (err) {
      if (!this.active || !this.taskTimers.has(id)) return;
      if (!(err instanceof ApiRequestError && err.code === Code.NOT_FOUND)) {
        // A passing failure (network, server): keep polling.
        this.schedule(id);
        return;
      }
    }
    // The task left states 1-2 (or is gone): stop polling it and read both lists again.
    this.taskTimers.delete(id);
    this.ended.add(id);
    await this.refreshAll();
  }
}

/** The one polling instance the Transmission list dialog drives. */
export const transmission = new TransmissionPolling();

onSessionEvent('logout', () => {
  transmission.stop();
  resetTransmission();
});
onSessionEvent('light-logout', () => {
  transmission.stop();
  resetTransmission();
});
