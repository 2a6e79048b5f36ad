import type { PlanItem } from './types.ts';

/**
 * A first-in, first-out list that drops what it has handed out: a head index, compacted now and
 * then, instead of `shift` (which copies) or keeping everything (which grows with the run).
 */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  take(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** What is left, in order, without taking it. */
  *values(): Generator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }

  /** Everything left, in order; the list is empty afterwards. */
  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}

/**
 * The items a streamed plan has made and its run has not settled yet (`planStreamed`,
 * `executeStreamed`): the walk waits for room (`room`) before listing another folder while
 * `window` items are outstanding, so a run holds about a window of items (plus the folders being
 * listed) whatever the size of the tree.
 */
export class PlanFeed {
  readonly window: number;
  /** Items made and not settled (queued here, waiting in a lane, or under way). */
  outstanding = 0;
  private readonly queue = new Fifo<PlanItem>();
  private ended = false;
  private failure: { err: unknown } | undefined;
  private abandoned = false;
  private wake: (() => void) | undefined;
  private waiting: (() => void)[] = [];
  private full: (() => void) | undefined;

  constructor(window = 8192) {
    this.window = Math.max(1, window);
  }

  /** An item the plan made. */
  push(item: PlanItem): void {
    if (this.abandoned) return;
    this.queue.push(item);
    this.outstanding++;
    this.wakeConsumer();
    if (this.outstanding >= this.window) this.wakeFull();
  }

  /**
   * Resolves once the plan is complete or a whole window of items waits: what a run must know
   * before it writes (the space and allowance it needs) is then known, or a window's worth of it.
   */
  async filled(): Promise<void> {
    while (!this.ended && !this.abandoned && this.outstanding < this.window)
      await new Promise<void>((resolve) => (this.full = resolve));
  }

  /** The items made and not taken yet, in order (they stay). */
  queued(): Iterable<PlanItem> {
    return this.queue.values();
  }

  /** Undefined while there is room; else a promise that resolves once the run has settled a quarter of the window. */
  room(): Promise<void> | undefined {
    if (this.abandoned || this.outstanding < this.window) return undefined;
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Items the run is done with (finished, failed, resumed or left alone). */
  settle(n = 1): void {
    this.outstanding -= n;
    if (this.waiting.length > 0 && this.outstanding <= (this.window * 3) / 4) this.letIn();
  }

  /** The plan is complete. */
  end(): void {
    this.ended = true;
    this.wakeConsumer();
    this.wakeFull();
  }

  /** Planning stopped with an error (a fatal one: the run stops too). */
  fail(err: unknown): void {
    this.failure ??= { err };
    this.end();
  }

  /** Why planning stopped, if it failed. */
  get error(): { err: unknown } | undefined {
    return this.failure;
  }

  get done(): boolean {
    return this.ended;
  }

  /**
   * The run stops taking items: the walk is let through (its caller aborts it) and the items not
   * taken yet are handed back.
   */
  abandon(): PlanItem[] {
    this.abandoned = true;
    this.letIn();
    this.wakeFull();
    const rest = this.queue.drain();
    this.outstanding -= rest.length;
    return rest;
  }

  private interrupted = false;

  /** The run stops: `next` answers undefined from now on (the items not taken stay for `abandon`). */
  interrupt(): void {
    this.interrupted = true;
    this.wakeConsumer();
  }

  /**
   * Up to `max` items, waiting for some; undefined once the plan is complete (or failed) and all
   * were taken, or once the run is interrupted.
   */
  async next(max: number): Promise<PlanItem[] | undefined> {
    if (this.interrupted) return undefined;
    while (this.queue.size === 0) {
      if (this.ended || this.abandoned || this.interrupted) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const out: PlanItem[] = [];
    for (let it = this.queue.take(); it !== undefined; it = out.length < max ? this.queue.take() : undefined)
      out.push(it);
    return out;
  }

  private wakeConsumer(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private wakeFull(): void {
    const w = this.full;
    this.full = undefined;
    w?.();
  }

  private letIn(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const resolve of w) resolve();
  }
}

/** A lane's queue of items, taken by a pool as they come (`for await`); ends once closed and empty. */
export class Lane implements AsyncIterable<PlanItem> {
  private readonly queue = new Fifo<PlanItem>();
  private closed = false;
  private wake: (() => void) | undefined;

  push(item: PlanItem): void {
    this.queue.push(item);
    this.wakeUp();
  }

  close(): void {
    this.closed = true;
    this.wakeUp();
  }

  /** Items not taken yet; the lane is closed. */
  drain(): PlanItem[] {
    this.close();
    return this.queue.drain();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<PlanItem> {
    for (;;) {
      const it = this.queue.take();
      if (it !== undefined) {
        yield it;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
