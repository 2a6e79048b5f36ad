import { nextRunTime, type Schedule } from '@skyferry/contract';

/** Time as the scheduler sees it; tests move it by hand. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** A task whose schedule is on and due. `schedule` is the spec's schedule value as JSON. */
export interface ScheduledTask {
  id: string;
  userId: string;
  schedule: string;
  timeZone: string;
  nextRunTime: number;
}

export interface ScheduleStore {
  /** Tasks with the schedule on and a next run time at or before `now`. */
  due(now: number, limit: number): Promise<ScheduledTask[]>;
  /** Moves the next run time from `expected` to `next` if no one else did; true when this call did. */
  advanceSchedule(id: string, expected: number | null, next: number | null): Promise<boolean>;
}

/** The first run of a schedule strictly after `after` (ms), in the zone; null when there is none. */
export function nextRunAfter(schedule: Schedule, timeZone: string, after: number): number | null {
  return nextRunTime(schedule, new Date(after), timeZone)?.getTime() ?? null;
}

export interface SchedulerOptions {
  store: ScheduleStore;
  /**
   * Starts the task for the slot that came due (`slot` is the run time, ms). Called once per slot
   * across every process; when it throws, the slot is put back and tried again on a later tick.
   */
  fire(task: ScheduledTask, slot: number): Promise<void>;
  clock?: Clock;
  /** How often `start()` ticks (default 5 s). */
  intervalMs?: number;
  /** Due tasks handled per query (default 100). */
  batch?: number;
  onError?: (err: unknown, task?: ScheduledTask) => void;
}

/**
 * Fires scheduled tasks. Every API and worker process may run one: a slot is claimed by moving the
 * task's next_run_time with a conditional UPDATE, so only one process fires it. The next run time
 * is computed after *now*, not after the missed slot, so a server that was down for days runs a
 * missed schedule once, not once per missed slot.
 */
export class Scheduler {
  private readonly o: Required<Omit<SchedulerOptions, 'onError'>> & Pick<SchedulerOptions, 'onError'>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(options: SchedulerOptions) {
    this.o = { clock: systemClock, intervalMs: 5_000, batch: 100, ...options };
  }

  /** One pass: fires every due task this process wins; returns them. */
  async tick(): Promise<ScheduledTask[]> {
    const now = this.o.clock.now();
    const fired: ScheduledTask[] = [];
    for (;;) {
      const due = await this.o.store.due(now, this.o.batch);
      let progressed = false;
      for (const task of due) {
        let next: number | null;
        try {
          next = nextRunAfter(JSON.parse(task.schedule) as Schedule, task.timeZone, now);
        } catch (err) {
          // A schedule that cannot be read is switched off rather than retried forever.
          next = null;
          this.o.onError?.(err, task);
        }
        if (!(await this.o.store.advanceSchedule(task.id, task.nextRunTime, next))) continue;
        progressed = true;
        try {
          await this.o.fire(task, task.nextRunTime);
          fired.push(task);
        } catch (err) {
          this.o.onError?.(err, task);
          await this.o.store.advanceSchedule(task.id, next, task.nextRunTime).catch(() => undefined);
        }
      }
      if (due.length < this.o.batch || !progressed) break;
    }
    return fired;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.o.intervalMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
